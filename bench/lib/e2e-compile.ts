/**
 * bench:e2e's children as they run in production: plain `node` on compiled JavaScript, without
 * tsx. Under `--import tsx` every child carries tsx's module loader (its own thread and heap) and
 * the transformed sources: about 35 MB of RSS per process that no deployment has
 * (docs/benchmarks.md § Memory). For a tree (this checkout or a `--before` one), its `dist` is
 * built with `tsc -p tsconfig.build.json` when missing or older than a file of `src`, and its
 * `bench/lib/e2e-*.ts` children are transformed by esbuild into `<tree>/.tmp/e2e-children/`, their
 * `../../src/` imports pointing at `../../dist/` (the same depth, so the paths stay relative).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { transformSync } from "esbuild";

/** The newest modification time of the files under `dir` whose name ends with `ext`. */
function newest(dir: string, ext: string): number {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(ext)) {
      max = Math.max(max, statSync(join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return max;
}

/** Builds `tree`'s dist if stale and returns the folder of its compiled e2e children. */
export function compiledChildren(tree: string): string {
  const built = join(tree, "dist", "index.js");
  let stale = true;
  try {
    stale = statSync(built).mtimeMs < newest(join(tree, "src"), ".ts");
  } catch {
    // no dist yet
  }
  if (stale) {
    console.error(`building ${tree}/dist (tsc -p tsconfig.build.json)`);
    execFileSync(join(tree, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.build.json"], {
      cwd: tree,
      stdio: "inherit",
    });
  }
  const from = join(tree, "bench", "lib");
  const out = join(tree, ".tmp", "e2e-children");
  mkdirSync(out, { recursive: true });
  for (const name of readdirSync(from)) {
    if (!/^e2e-.*\.ts$/.test(name) || name === "e2e-compile.ts") continue;
    const { code } = transformSync(readFileSync(join(from, name), "utf8"), {
      loader: "ts",
      format: "esm",
      target: "node20",
    });
    writeFileSync(join(out, name.replace(/\.ts$/, ".js")), code.replaceAll('"../../src/', '"../../dist/'));
  }
  return out;
}
