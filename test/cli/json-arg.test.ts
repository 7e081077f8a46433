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
