/**
 * What the CLI refuses before sending anything: a label key given twice, a schedules file or an
 * identities file past its bound.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { orbit } from "../e2e/harness.js";

const nowhere = { ORBIT_SERVER: "http://127.0.0.1:9" };

it("refuses a --label key given twice, as a repeated JSON key (it kept the last without a word)", async () => {
  const r = await orbit(
    ["schedule", "create", "x", "--workflow", "W", "--interval", "1h", "--label", "team=a", "--label", "team=b"],
    nowhere,
  );
  expect([r.code, r.stderr.split("\n")[0]]).toEqual([
    2,
    "orbit: option '--label <key=value>' argument 'team=b' is invalid. The key \"team\" is given twice; give each key once",
  ]);
});

it("stops reading a schedules file past 64 MB (/dev/zero read until 625 MB, /dev/urandom 1.2 GB)", async () => {
  const r = await orbit(["schedule", "apply", "-f", "/dev/zero"], nowhere);
  expect([r.code, r.stderr]).toEqual([
    1,
    "orbit: the file /dev/zero is larger than 64 MB; split its schedules over several files (the server takes at most 16 MB of them as JSON in one apply)\n",
  ]);
});

it("stops reading an `orbit server --config` file past 4 MB (/dev/zero was read until 16 GB)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orbit-config-"));
  try {
    // Comments only: read whole, it would parse and be refused for holding no identities instead.
    const path = join(dir, "big.yaml");
    writeFileSync(path, "# padding\n".repeat(420_000));
    const r = await orbit(["server", "--config", path, "--data-dir", dir, "--port", "0"], nowhere);
    expect([r.code, r.stderr]).toEqual([1, `orbit: --config ${path}: the file is larger than 4 MB\n`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
