/**
 * The SDK's option types take `undefined` wherever its code does, so that a program compiled with
 * `exactOptionalPropertyTypes` may pass `token: process.env.ORBIT_TOKEN` (it failed with TS2379:
 * WorkerOptions, OrbitClientOptions, defineWorkflow's definition and its retry). Type-checks
 * fixtures/exact-optional-options.ts with the repository's settings and that flag on.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const FIXTURE = join(ROOT, "test", "worker", "fixtures", "exact-optional-options.ts");

it("accepts undefined for every optional option under exactOptionalPropertyTypes", () => {
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
