/**
 * Vitest global setup: transpiles src/, test/ and scripts/ once per run into a mirror tree of plain ES
 * modules, so that the child processes the tests start (servers, workers, the CLI, crash and fire
 * children) run with plain `node` instead of `node --import tsx`. Starting a child through tsx
 * resolves every module through its loader thread and cost 2-3× the start-up of the same code as
 * JavaScript on this project's 2-core machine (docs/testing.md); the e2e, worker, cluster and crash
 * suites start hundreds of children.
 *
 * The mirror sits at the same depth as the sources (`<mirror>/src/version.js` next to
 * `<mirror>/package.json`), with links to package.json, migrations/ and ui/, so every
 * `new URL("../…", import.meta.url)` of the sources still finds the package's files, and bare
 * imports resolve from the repository's node_modules above it. The transpiler is the one tsx uses
 * (esbuild), so the children run the same code. Each run builds its own mirror (runs in parallel
 * do not share one) and removes it at the end.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { TestProject } from "vitest/node";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache", "orbit-test-children");

declare module "vitest" {
  export interface ProvidedContext {
    /** The mirror tree of transpiled sources for child processes ({@link childArgs}). */
    orbitChildBuild: string;
  }
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

/** Removes mirrors left by runs that were killed (their process is gone). */
function removeStale(): void {
  let names: string[] = [];
  try {
    names = readdirSync(CACHE);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.split("-")[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {}
    if (!alive) rmSync(join(CACHE, name), { recursive: true, force: true });
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  removeStale();
  const out = join(CACHE, `${process.pid}-${randomBytes(4).toString("hex")}`);
  mkdirSync(out, { recursive: true });
  const files = ["src", "test", "scripts"].flatMap((dir) => walk(join(ROOT, dir)));
  const sources = files.filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"));
  await build({
    entryPoints: sources,
    outdir: out,
    outbase: ROOT,
    bundle: false,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  // Data files next to the sources (fixtures a child reads relative to itself).
  for (const file of files.filter((f) => !f.endsWith(".ts"))) {
    const target = join(out, relative(ROOT, file));
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(file, target);
  }
  for (const name of ["package.json", "migrations", "ui"]) symlinkSync(join(ROOT, name), join(out, name));
  project.provide("orbitChildBuild", out);
  return () => rmSync(out, { recursive: true, force: true });
}
