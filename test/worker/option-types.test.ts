/**
 * The SDK's option types take `undefined` wherever its code does, so that a program compiled with
 * `exactOptionalPropertyTypes` may pass `token: process.env.ORBIT_TOKEN` (it failed with TS2379:
 * WorkerOptions, OrbitClientOptions, defineWorkflow's definition and its retry). Type-checks
 * fixtures/exact-optional-options.ts with the repository's settings and that flag on.
 */
import { join } from "node:path";
import { expect, it } from "vitest";
import { exactOptionalTypeErrors, ROOT } from "../helpers/type-check.js";

const FIXTURE = join(ROOT, "test", "worker", "fixtures", "exact-optional-options.ts");

it("accepts undefined for every optional option under exactOptionalPropertyTypes", () => {
  expect(exactOptionalTypeErrors(FIXTURE)).toEqual([]);
}, 60_000);
