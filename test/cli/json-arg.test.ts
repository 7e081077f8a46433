/** A flag's JSON value (src/cli/args.ts): given as it is, or as `@file`. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { parseJsonArg } from "../../src/cli/args.js";

it("reads JSON as given, or from the file after @, and says what is wrong with either", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-json-arg-"));
  writeFileSync(join(dir, "in.json"), '{"a":1}');
  expect(parseJsonArg('{"a":1}')).toEqual({ a: 1 });
  expect(parseJsonArg(`@${join(dir, "in.json")}`)).toEqual({ a: 1 });
  expect(() => parseJsonArg(`@${join(dir, "gone.json")}`)).toThrow(/^cannot read .*gone\.json: ENOENT\.$/);
  // `@` alone named no file: it said "cannot read : ENOENT." (a tester's report).
  expect(() => parseJsonArg("@")).toThrow("give a file after @ (@input.json), or the JSON itself.");
  expect(() => parseJsonArg("{a:1}")).toThrow(/^the value is not JSON \(.*\); give JSON or @file\.$/);
});

it("refuses a key given twice, as the server does, and a file too large to be an input without reading it all", () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-json-arg-"));
  // JSON.parse keeps the last key: `--input '{"a":1,"a":2}'` stored {"a":2} (a tester's fuzz).
  expect(() => parseJsonArg('{"a":1,"a":2}')).toThrow(
    'the value gives the key "a" twice in one object; give each key once.',
  );
  writeFileSync(join(dir, "twice.json"), '{"b": [{"c": 1, "\\u0063": 2}]}');
  expect(() => parseJsonArg(`@${join(dir, "twice.json")}`)).toThrow(/^the file .*twice\.json gives the key "c" twice/);
  expect(parseJsonArg('{"a":{"k":1},"b":{"k":"k"}}')).toEqual({ a: { k: 1 }, b: { k: "k" } });
  // `@/dev/zero` read until the process had 6 GB; now it stops after 4 MB.
  expect(() => parseJsonArg("@/dev/zero")).toThrow(
    "the file /dev/zero is larger than 4 MB; an input may be at most 1 MB of JSON.",
  );
  writeFileSync(join(dir, "spaced.json"), `{"a": "x"${" ".repeat(3 * 1024 * 1024)}}`);
  expect(parseJsonArg(`@${join(dir, "spaced.json")}`)).toEqual({ a: "x" });
});
