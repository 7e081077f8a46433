#!/usr/bin/env node
/**
 * The package.json that `npm pack` and `npm publish` ship carries no `scripts`: they are this
 * checkout's (`prepare` builds, `start` runs examples/, which is not shipped, `test` runs vitest),
 * and npm 11 listed the package's `prepare` among the "install scripts not yet covered by
 * allowScripts" of every project that installed the tarball (a tester's report).
 *
 * `prepack` runs `strip` (after the build): package.json is kept aside in .tmp/pack/ and rewritten
 * without `scripts`; `postpack` runs `restore`, which puts it back byte for byte. A pack that failed
 * between the two leaves the stripped file: the next `strip` (or `restore`) puts the original back
 * first (docs/operations.md § Install).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MANIFEST = "package.json";
const FOLDER = join(".tmp", "pack");
const KEPT = join(FOLDER, "package.json");

function restore() {
  if (!existsSync(KEPT)) return;
  copyFileSync(KEPT, MANIFEST);
  rmSync(FOLDER, { recursive: true });
}

function strip() {
  const current = JSON.parse(readFileSync(MANIFEST, "utf8"));
  // No scripts and a kept copy: an earlier pack stopped before its postpack.
  if (current.scripts === undefined && existsSync(KEPT)) restore();
  const text = readFileSync(MANIFEST, "utf8");
  const { scripts: _dev, ...shipped } = JSON.parse(text);
  mkdirSync(FOLDER, { recursive: true });
  writeFileSync(KEPT, text);
  writeFileSync(MANIFEST, `${JSON.stringify(shipped, null, 2)}\n`);
}

const command = process.argv[2];
if (command === "strip") strip();
else if (command === "restore") restore();
else {
  console.error("usage: node scripts/pack-manifest.mjs strip|restore   (npm's prepack and postpack run it)");
  process.exit(2);
}
