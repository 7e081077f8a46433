/** Files people write are read strictly (src/domain/plain-yaml.ts): the apply file, the access config. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { parsePlainYaml } from "../../src/domain/plain-yaml.js";
import { loadAccessConfig } from "../../src/server/access-config.js";

it("reads YAML and JSON", () => {
  expect(parsePlainYaml("a: [1, {b: x}]\n")).toEqual({ a: [1, { b: "x" }] });
  expect(parsePlainYaml('{"a": 1.5}')).toEqual({ a: 1.5 });
});

it.each([
  ["a: !!js/function 'function () {}'", /^Unresolved tag: tag:yaml\.org,2002:js\/function at line 1, column 4$/],
  ["a: 1\na: 2", /^Map keys must be unique at line 2, column 1$/],
  ["a: [", /^Flow sequence in block collection must be sufficiently indented and end with a \]/],
  [
    `a: &a [x, x, x, x, x, x, x, x, x]\n${["b", "c", "d", "e", "f", "g"].map((k, i) => `${k}: &${k} [${Array(9).fill(`*${"abcdef"[i]}`).join(", ")}]`).join("\n")}`,
    /^Excessive alias count indicates a resource exhaustion attack$/,
  ],
])("refuses %j with one line", (text, message) => {
  expect(() => parsePlainYaml(text)).toThrow(message);
});

it("refuses an access config with an unknown tag, naming the file, without a process warning", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-yaml-"));
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on("warning", onWarning);
  try {
    const file = join(dir, "access.yaml");
    writeFileSync(file, "identities: !!js/undefined ''\n");
    expect(() => loadAccessConfig(file)).toThrow(`--config ${file}: Unresolved tag: tag:yaml.org,2002:js/undefined`);
  } finally {
    process.off("warning", onWarning);
    rmSync(dir, { recursive: true, force: true });
  }
  expect(warnings).toEqual([]);
});
