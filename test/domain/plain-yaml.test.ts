/** Files people write are read strictly (src/domain/plain-yaml.ts): the apply file, the access config. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { stringifyJsonText } from "../../src/domain/json-text.js";
import { parsePlainYaml } from "../../src/domain/plain-yaml.js";
import { loadAccessConfig } from "../../src/server/access-config.js";

it("reads YAML and JSON", () => {
  expect(parsePlainYaml("a: [1, {b: x}]\n")).toEqual({ a: [1, { b: "x" }] });
  expect(parsePlainYaml('{"a": 1.5}')).toEqual({ a: 1.5 });
});

it("keeps a number's text where JavaScript would write it otherwise, when asked (an apply file's inputs)", () => {
  const text = "a: 120.0\nb: [1e3, 1.50, 7, 0x1F, +12, .5, '120.0', 12345678901234567890, -0.0]\n";
  const doc = parsePlainYaml(text, { numbersAsWritten: true });
  expect(stringifyJsonText(doc)).toBe('{"a":120.0,"b":[1e3,1.50,7,31,12,0.5,"120.0",12345678901234567890,-0.0]}');
  expect(parsePlainYaml(text)).toEqual({ a: 120, b: [1000, 1.5, 7, 31, 12, 0.5, "120.0", 12345678901234567000, -0] });
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

it("says plainly why an identities file cannot serve: missing, a folder, empty, naming no identity", () => {
  // The system's ENOENT/EISDIR text, "must be a JSON object" for an empty YAML file, and a server
  // that refused every request 401 for `identities: []` (a tester).
  const dir = mkdtempSync(join(tmpdir(), "orbit-config-"));
  try {
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const missing = join(dir, "missing.yaml");
    expect(() => loadAccessConfig(missing)).toThrow(`--config ${missing}: no such file`);
    expect(() => loadAccessConfig(dir)).toThrow(`--config ${dir}: it is a folder, not a file`);
    const empty = file("empty.yaml", "\n");
    expect(() => loadAccessConfig(empty)).toThrow(`--config ${empty}: the file is empty; it must list \`identities:\``);
    const none = file("none.yaml", "identities: []\n");
    expect(() => loadAccessConfig(none)).toThrow(
      `--config ${none}: the file names no identity, so the server would refuse every request; add one, or start without --config`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
