#!/usr/bin/env node
// The `orbit` command. The TypeScript sources are compiled to dist/ by `npm install` (the
// package's `prepare` script); this file only hands over to the compiled CLI.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const main = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write("orbit: dist/ is missing; run `npm install` (or `npm run build`) in the repository first\n");
  process.exit(2);
}
const { run } = await import(main.href);
process.exitCode = await run(process.argv.slice(2));
