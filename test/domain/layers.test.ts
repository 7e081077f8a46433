/**
 * The layers of docs/architecture.md, checked on the sources: every relative import under src/
 * (static, re-export or dynamic; type-only ones too) points at the importer's own layer or one the
 * table below allows, so the worker SDK and the CLI never load the server's internals and the
 * inner layers never reach outward.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = resolve("src");

/** What each layer may import besides itself (docs/architecture.md § Layers). */
const ALLOWED: Record<string, readonly string[]> = {
  "version.ts": [],
  domain: ["version.ts"],
  time: ["domain"],
  clock: ["domain"],
  store: ["domain", "time", "clock"],
  engine: ["domain", "time", "clock", "store"],
  scheduler: ["domain", "time", "clock", "store", "engine"],
  api: ["domain", "time", "clock", "store", "engine", "scheduler", "version.ts"],
  server: ["domain", "time", "clock", "store", "engine", "scheduler", "api", "version.ts"],
  client: ["domain", "version.ts"],
  worker: ["domain", "clock", "client", "version.ts"],
  cli: ["domain", "time", "client", "version.ts"],
  "index.ts": ["domain", "client", "worker", "version.ts"],
};

/** Imports outside the table, each with its reason. */
const EXCEPTIONS = new Set([
  // `orbit backup` / `orbit restore` copy a stopped server's SQLite file themselves (docs/cli.md).
  "cli/backup.ts -> store/sqlite/backup.ts",
]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

const layerOf = (file: string): string => relative(SRC, file).split("/")[0] ?? "";

/** The relative modules `text` imports: `from "…"`, `import("…")` and `import "…"`. */
function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)"(\.{1,2}\/[^"]+)"/gm))
    found.push(m[1] ?? "");
  return found;
}

describe("the layers", () => {
  it("reads every kind of relative import", () => {
    const text = [
      'import { a } from "../domain/a.js";',
      'import type { B } from "./b.js";',
      'export { c } from "../time/c.js";',
      'const d = await import("../store/d.js");',
      'import "./side-effect.js";',
      'import { e } from "node:fs";',
    ].join("\n");
    expect(importsOf(text)).toEqual(["../domain/a.js", "./b.js", "../time/c.js", "../store/d.js", "./side-effect.js"]);
  });

  it("every import under src/ points inward (docs/architecture.md)", () => {
    const wrong: string[] = [];
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      const from = layerOf(file);
      const allowed = ALLOWED[from];
      if (allowed === undefined) {
        wrong.push(`${relative(SRC, file)}: the layer "${from}" is not in the table`);
        continue;
      }
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
        const to = layerOf(target);
        const edge = `${relative(SRC, file)} -> ${relative(SRC, target)}`;
        if (to !== from && !allowed.includes(to) && !EXCEPTIONS.has(edge)) wrong.push(edge);
      }
    }
    expect(wrong).toEqual([]);
  });
});
