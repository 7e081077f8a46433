/**
 * docs/cli.md's list of other schedulers' option names (`--every` → `--interval`, …) against the
 * suggestions the CLI makes (src/cli/main.ts SYNONYMS): the page said `--starting-deadline-seconds`
 * → `--start-timeout` while the CLI (and docs/outcomes.md § Timeouts) says `--catchup-window`.
 */
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { SYNONYMS } from "../../src/cli/main.js";

it("every `--a` → `--b` docs/cli.md names is a suggestion the CLI makes", () => {
  const page = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
  const from = page.indexOf("An unknown option is answered");
  const paragraph = page.slice(from, page.indexOf("(src/cli/main.ts;", from));
  const pairs: Array<[string, string]> = [];
  for (const m of paragraph.matchAll(/((?:`--[a-z-]+`(?:,\s*|\s+and\s+))*`--[a-z-]+`)\s*→\s*`(--[a-z-]+)`/g)) {
    for (const name of (m[1] ?? "").match(/--[a-z-]+/g) ?? []) pairs.push([name, m[2] ?? ""]);
  }
  expect(pairs.length).toBeGreaterThan(20);
  for (const [name, flag] of pairs) expect([SYNONYMS[name]].flat(), `${name} → ${flag}`).toContain(flag);
});
