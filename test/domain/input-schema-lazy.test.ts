/**
 * Ajv is loaded on the first input schema compiled, not with the module (src/domain/input-schema.ts):
 * a worker process whose workflows declare no input schema never loads it (docs/operations.md
 * § Sizing). Checked in a fresh process, whose module cache is its own.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

/** Whether Ajv's CommonJS modules are loaded after importing the worker SDK, then after compiling a schema. */
const PROBE = `
const { createRequire } = await import("node:module");
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes("/node_modules/ajv/"));
await import(process.cwd() + "/src/index.ts");
const afterImport = loaded();
const { compileInputSchema } = await import(process.cwd() + "/src/domain/input-schema.ts");
const validate = compileInputSchema({ type: "object", properties: { to: { type: "string", format: "email" } } }, "Mail@1.0.0");
console.log(JSON.stringify({ afterImport, afterCompile: loaded(), valid: validate({ to: "a@b.example" }), invalid: validate({ to: "nope" }) }));
`;

describe("input schemas", () => {
  it("the worker SDK does not load Ajv until a schema is compiled", async () => {
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", PROBE], {
      cwd: process.cwd(),
    });
    expect(JSON.parse(stdout.trim())).toEqual({ afterImport: false, afterCompile: true, valid: true, invalid: false });
  });
});
