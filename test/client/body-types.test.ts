/**
 * The client's request and answer types as a TypeScript user meets them (docs/api.md): under
 * `exactOptionalPropertyTypes`, `registerWorkflow` takes a definition's own `input` and
 * `description` (their types include undefined: it failed with TS2379, and examples/main.ts wrote
 * `OrderProcessing.input!`), and `triggerSchedule`'s answer narrows on `started` to an execution id
 * that is text, with `overlap` one of the policies. Type-checks fixtures/body-types.ts with the
 * repository's settings and that flag on.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { exactOptionalTypeErrors, ROOT } from "../helpers/type-check.js";

const FIXTURE = join(ROOT, "test", "client", "fixtures", "body-types.ts");

it("types registration bodies and trigger answers as the server takes and gives them", () => {
  expect(exactOptionalTypeErrors(FIXTURE)).toEqual([]);
}, 60_000);
