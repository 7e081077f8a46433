/**
 * Output that cannot be written: a reader gone away (`| head`, EPIPE) ends the command quietly with
 * its own exit code; any other write error (a full disk, `> /dev/full`) lost the output, so the
 * command ends with exit 1 and says why. Every write error once counted as a closed pipe (exit 0).
 */
import { Writable } from "node:stream";
import { expect, it } from "vitest";
import { streamWriter } from "../../src/cli/io.js";
import { FakeServer } from "./fake-server.js";
import { runCli } from "./run-cli.js";

/** A stdout whose every write fails with `code`, as a full disk's or a closed pipe's does. */
function failingStdout(code: string, message: string): Writable {
  return new Writable({
    highWaterMark: 1024,
    write(_chunk, _enc, cb) {
      cb(Object.assign(new Error(`${code}: ${message}, write`), { code }));
    },
  });
}

it("a full disk ends a long output with exit 1 and one line naming the error", async () => {
  const r = await runCli(["schedule", "preview", "--interval", "1s", "--count", "1000", "--json"], {
    stdout: streamWriter(failingStdout("ENOSPC", "no space left on device")),
  });
  expect([r.code, r.stderr]).toEqual([1, "orbit: cannot write the output: no space left on device (ENOSPC)\n"]);
});

it("a full disk ends a printed output (orbit version) with exit 1 too", async () => {
  const r = await runCli(["version"], { stdout: streamWriter(failingStdout("ENOSPC", "no space left on device")) });
  expect([r.code, r.stderr]).toEqual([1, "orbit: cannot write the output: no space left on device (ENOSPC)\n"]);
  const eio = await runCli(["version"], { stdout: streamWriter(failingStdout("EIO", "i/o error")) });
  expect([eio.code, eio.stderr]).toEqual([1, "orbit: cannot write the output: i/o error (EIO)\n"]);
});

it("a reader gone away is still exit 0, quietly", async () => {
  const r = await runCli(["version"], { stdout: streamWriter(failingStdout("EPIPE", "broken pipe")) });
  expect([r.code, r.stderr]).toEqual([0, ""]);
});

it("orbit doctor | head -0 keeps doctor's exit 1 for a failed check", async () => {
  const server = new FakeServer((r) => {
    if (r.path === "/healthz") return { status: 200, body: { status: "ok" } };
    if (r.path === "/readyz") return { status: 503, body: { status: "not_ready", role: "single", message: "down" } };
    if (r.path === "/v1/me") return { status: 200, body: { name: null, kind: "client", allow: [] } };
    if (r.path === "/v1/version") return { status: 200, body: { version: "0.1.0" } };
    if (r.path === "/v1/doctor") return { status: 503, body: { code: "UNAVAILABLE", message: "database away" } };
    return undefined;
  });
  const r = await server.run(["doctor"], { stdout: streamWriter(failingStdout("EPIPE", "broken pipe")) });
  expect(r.code).toBe(1);
});
