/**
 * Runs the CLI straight from the sources (`node --import tsx src/cli/entry.ts …`), as bin/orbit.js
 * does from dist/: used by the subprocess tests, so they need no build.
 */
import { run } from "./main.js";

process.exitCode = await run(process.argv.slice(2));
