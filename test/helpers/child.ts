/**
 * How a test starts a TypeScript file of this repository as a child process: `node <file>.js` from
 * the run's transpiled mirror (test/support/child-build.ts), or `node --import tsx <file>.ts` when
 * the mirror is missing (a runner without the global setup) or ORBIT_TEST_CHILDREN=tsx asks for it.
 */
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The node arguments that run `tsFile` (an absolute path under src/, test/ or scripts/). */
export function childArgs(tsFile: string): string[] {
  const mirror = inject("orbitChildBuild");
  const rel = relative(ROOT, tsFile);
  if (!mirror || process.env.ORBIT_TEST_CHILDREN === "tsx" || rel.startsWith("..") || !tsFile.endsWith(".ts"))
    return ["--import", "tsx", tsFile];
  return [join(mirror, rel.replace(/\.ts$/, ".js"))];
}
