/**
 * The client's request and answer types as a TypeScript user meets them (docs/api.md): under
 * `exactOptionalPropertyTypes`, `registerWorkflow` takes a definition's own `input` and
 * `description` (their types include undefined: it failed with TS2379, and examples/main.ts wrote
 * `OrderProcessing.input!`), and `triggerSchedule`'s answer narrows on `started` to an execution id
 * that is text, with `overlap` one of the policies. Type-checks fixtures/body-types.ts with the
 * repository's settings and that flag on.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FIXTURE = join(ROOT, "test", "client", "fixtures", "body-types.ts");

it("types registration bodies and trigger answers as the server takes and gives them", () => {
  const read = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
  const program = ts.createProgram([FIXTURE], { ...parsed.options, exactOptionalPropertyTypes: true, noEmit: true });
  const file = program.getSourceFile(FIXTURE);
  if (file === undefined) throw new Error(`${FIXTURE} was not read`);
  const said = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
    const at = d.start === undefined ? 0 : file.getLineAndCharacterOfPosition(d.start).line + 1;
    return `line ${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
  expect(said).toEqual([]);
}, 60_000);
