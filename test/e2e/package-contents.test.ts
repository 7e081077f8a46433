/**
 * What the packed package carries beside its code (docs/operations.md § Install): a package.json
 * without the checkout's scripts, and guides whose links resolve inside the package. A newcomer
 * installing the tarball was asked by npm 11 to approve `orbit-scheduler@0.1.0 (prepare: npm run
 * build)`, was handed `start: node examples/dist/main.js` without examples/, and docs/ui.md linked
 * nine screenshots the tarball did not hold.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, posix } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCommand } from "../helpers/run-command.js";
import { ROOT } from "./harness.js";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const MANIFEST = readFileSync(join(ROOT, "package.json"), "utf8");

const run = (cmd: string, args: readonly string[], cwd: string) => runCommand(cmd, args, cwd, 120_000);

describe("npm pack: the package.json it ships", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-pack-manifest-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A copy of this package.json and the pack script, packed with npm's scripts on: the copy's build
   * is a no-op (the build is not what is tested, and takes a minute on two cores).
   */
  function project(): { at: string; text: string } {
    const at = mkdtempSync(join(dir, "p-"));
    const pkg = JSON.parse(MANIFEST) as { scripts: Record<string, string> };
    pkg.scripts.build = 'node -e ""';
    const text = `${JSON.stringify(pkg, null, 2)}\n`;
    writeFileSync(join(at, "package.json"), text);
    mkdirSync(join(at, "scripts"));
    copyFileSync(join(ROOT, "scripts", "pack-manifest.mjs"), join(at, "scripts", "pack-manifest.mjs"));
    return { at, text };
  }

  it("has no scripts, and the checkout's package.json is back as it was", async () => {
    const { at, text } = project();
    const packed = await run(NPM, ["pack", "--json", "--pack-destination", at], at);
    expect(packed.code, packed.stderr).toBe(0);
    const filename = (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]?.filename ?? "";
    const inside = await run("tar", ["-xzOf", join(at, filename), "package/package.json"], at);
    expect(inside.code, inside.stderr).toBe(0);
    const shipped = JSON.parse(inside.stdout) as Record<string, unknown>;
    expect(shipped.scripts).toBeUndefined();
    const { scripts: _checkout, ...rest } = JSON.parse(text) as Record<string, unknown>;
    expect(shipped).toEqual(rest);
    expect(readFileSync(join(at, "package.json"), "utf8")).toBe(text);
    expect(existsSync(join(at, ".tmp", "pack", "package.json"))).toBe(false);
  }, 120_000);

  it("a pack that stopped before postpack is put right by the next one", async () => {
    const { at, text } = project();
    const script = join(at, "scripts", "pack-manifest.mjs");
    expect((await run(process.execPath, [script, "strip"], at)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(at, "package.json"), "utf8")).scripts).toBeUndefined();
    // No postpack: the next pack's strip restores first, its restore leaves the original.
    expect((await run(process.execPath, [script, "strip"], at)).code).toBe(0);
    expect((await run(process.execPath, [script, "restore"], at)).code).toBe(0);
    expect(readFileSync(join(at, "package.json"), "utf8")).toBe(text);
  });

  it("the checkout's own package.json keeps the scripts npm install, npm start and npm test use", () => {
    const scripts = (JSON.parse(MANIFEST) as { scripts: Record<string, string> }).scripts;
    expect(scripts.prepare).toBe("npm run build");
    expect(scripts.start).toBe("node examples/dist/main.js");
    expect(scripts.test).toBe("vitest run");
    expect(scripts.prepack).toMatch(/^npm run build && node scripts\/pack-manifest\.mjs strip$/);
    expect(scripts.postpack).toBe("node scripts/pack-manifest.mjs restore");
  });
});

describe("npm pack: the guides it ships", () => {
  it("every relative link and image of a shipped Markdown page is in the package", async () => {
    const listed = await run(NPM, ["pack", "--dry-run", "--json", "--ignore-scripts"], ROOT);
    expect(listed.code, listed.stderr).toBe(0);
    const files = new Set(
      (JSON.parse(listed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path),
    );
    expect(files.has("README.md")).toBe(true);
    expect(files.has("docs/quickstart.md")).toBe(true);
    // docs/benchmarks.md (285 KB) and docs/ui.md with its screenshots stay in the repository.
    expect(files.has("docs/benchmarks.md")).toBe(false);
    // Nothing may point outside the package.
    const broken: string[] = [];
    for (const page of [...files].filter((f) => f.endsWith(".md"))) {
      const text = readFileSync(join(ROOT, page), "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target = ""] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
        const path = posix.normalize(posix.join(dirname(page), decodeURI(target.split("#")[0] ?? "")));
        if (!files.has(path)) broken.push(`${page} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
    // The package ships no source maps: a compiled file that named one sent bundlers and debuggers
    // after 223 files that were not there.
    const naming = [...files].filter(
      (f) => f.endsWith(".js") && readFileSync(join(ROOT, f), "utf8").includes("sourceMappingURL"),
    );
    expect(naming).toEqual([]);
  }, 120_000);
});
