/**
 * Type-checks one fixture file with the repository's tsconfig and `exactOptionalPropertyTypes` on,
 * as a TypeScript user with that flag compiles against the SDK (test/client/body-types.test.ts,
 * test/worker/option-types.test.ts).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The fixture's diagnostics, each `line N: TS<code> <message>`; empty when it compiles. */
export function exactOptionalTypeErrors(fixture: string): string[] {
  const read = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
  const program = ts.createProgram([fixture], { ...parsed.options, exactOptionalPropertyTypes: true, noEmit: true });
  const file = program.getSourceFile(fixture);
  if (file === undefined) throw new Error(`${fixture} was not read`);
  return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
    const at = d.start === undefined ? 0 : file.getLineAndCharacterOfPosition(d.start).line + 1;
    return `line ${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
  });
}
