/**
 * The code blocks of the guides, as a reader copies them (a tester ran every one): each TypeScript
 * or JavaScript block of README.md and docs/ parses (docs/workflows.md § Wiring had
 * `{ /* … *\/, onTaskQueued }`), and the two that are whole programs type-check under a strict
 * project with `exactOptionalPropertyTypes` and `noUnusedLocals`: docs/workflows.md § A workflow
 * (it called `reserve`, `ship`, … without declaring them) and docs/operations.md § Embed (it used
 * an undefined `Report` and imported `OrbitClient` unused). "orbit-scheduler" resolves to src/
 * through the repository's tsconfig paths; test/package/declarations.test.ts compiles the first
 * one against the built declarations too.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../e2e/harness.js";

interface Block {
  page: string;
  line: number;
  lang: string;
  code: string;
}

function blocks(page: string): Block[] {
  const text = readFileSync(join(ROOT, page), "utf8");
  return [...text.matchAll(/^```(ts|typescript|js|javascript)\n([\s\S]*?)^```/gm)].map((m) => ({
    page,
    line: text.slice(0, m.index).split("\n").length,
    lang: m[1] ?? "ts",
    code: m[2] ?? "",
  }));
}

/** The first block after `heading` (a line of the page). */
function blockUnder(page: string, heading: string): Block {
  const text = readFileSync(join(ROOT, page), "utf8");
  const at = text.split("\n").indexOf(heading);
  if (at < 0) throw new Error(`${page} has no heading ${heading}`);
  const block = blocks(page).find((b) => b.line > at);
  if (block === undefined) throw new Error(`${page} has no code block under ${heading}`);
  return block;
}

const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

describe("the guides' code blocks", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-snippets-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("parse", () => {
    const said: string[] = [];
    for (const b of PAGES.flatMap(blocks)) {
      const out = ts.transpileModule(b.code, {
        fileName: b.lang.startsWith("j") ? "block.mjs" : "block.mts",
        reportDiagnostics: true,
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, allowJs: true },
      });
      for (const d of out.diagnostics ?? []) {
        said.push(`${b.page}:${b.line}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
      }
    }
    expect(said).toEqual([]);
  });

  it("that are whole programs type-check as written", () => {
    const programs = [blockUnder("docs/workflows.md", "## A workflow"), blockUnder("docs/operations.md", "## Embed")];
    const files = programs.map((b, i) => {
      const file = join(dir, `block${i}.mts`);
      writeFileSync(file, b.code);
      return { file, b };
    });
    const read = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, ROOT);
    const program = ts.createProgram(
      files.map((f) => f.file),
      { ...parsed.options, exactOptionalPropertyTypes: true, noUnusedLocals: true, noEmit: true },
    );
    const said: string[] = [];
    for (const { file, b } of files) {
      const source = program.getSourceFile(file);
      if (source === undefined) throw new Error(`${file} was not read`);
      for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
        const at = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line + 1;
        said.push(`${b.page}:${b.line + at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
      }
    }
    expect(said).toEqual([]);
  }, 60_000);
});
