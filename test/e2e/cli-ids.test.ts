/**
 * Issue 10 item 7 at the CLI: `orbit schedule create` with the id "." or ".." (a path segment of
 * its own, which /v1/schedules/{id} could never reach again) is refused by a real server, the CLI
 * prints the refusal and exits non-zero, and nothing is created.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, e2eTitle, HAS_SERVER, type OrbitServer, orbit, startOrbitServer } from "./harness.js";

describe.skipIf(!HAS_SERVER)(e2eTitle("orbit schedule create refuses the ids . and .. (e2e)"), () => {
  let server: OrbitServer;
  const cli = (...args: string[]): Promise<CliRun> => orbit([...args, "--server", server.url]);

  beforeAll(async () => {
    server = await startOrbitServer();
    expect((await cli("workflow", "register", "--name", "Tick", "--version", "1.0.0")).code).toBe(0);
  });
  afterAll(async () => {
    await server?.stop();
  });

  for (const id of [".", ".."]) {
    it(`refuses "${id}" with the server's message and creates nothing`, async () => {
      const r = await cli("schedule", "create", id, "--workflow", "Tick", "--interval", "1m");
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(`schedule_id "${id}" is invalid: it must not be "." or ".."`);
      const list = await cli("schedule", "list", "--json");
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject({ schedules: [] });
    });
  }

  it("refuses an empty id before sending (the path named the list, read as one schedule)", async () => {
    for (const args of [
      ["schedule", "get", ""],
      ["schedule", "delete", ""],
      ["status", ""],
    ]) {
      const r = await cli(...args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({
        args,
        code: 1,
        stderr: "orbit: an empty id names nothing: give the id\n",
      });
    }
  });
});
