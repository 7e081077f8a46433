/**
 * `ORBIT_TOKEN=<an identity without the schedule action> orbit schedule list` printed the header
 * alone, exit 0, as for a server without schedules: the server lists only the schedules of
 * workflows the caller may schedule (a tester). The web UI says why, from GET /v1/me; the CLI now
 * says it too, on stderr, for an empty list and a token given (and for `ps` and `workflow list`,
 * which list what the identity may read). stdout and --json are unchanged.
 */
import { describe, expect, it } from "vitest";
import { FakeServer } from "./fake-server.js";

const TOKEN = { ORBIT_TOKEN: "t-reader" };

/** A server whose lists are empty and whose /v1/me answers `me`. */
function emptyFor(me: unknown): FakeServer {
  return new FakeServer((req) => {
    const path = req.path.split("?")[0];
    if (path === "/v1/me") return { status: 200, body: me };
    if (path === "/v1/schedules") return { status: 200, body: { schedules: [], next_cursor: null } };
    if (path === "/v1/executions") return { status: 200, body: { executions: [], next_cursor: null } };
    if (path === "/v1/workflows") return { status: 200, body: { workflows: [] } };
    if (path === "/v1/workers") return { status: 200, body: { workers: [] } };
    return undefined;
  });
}

const reader = { name: "reader", kind: "client", allow: [{ workflows: ["*"], actions: ["read", "start"] }] };
const asked = (server: FakeServer): boolean => server.requests.some((r) => r.path === "/v1/me");

describe("an empty list for an identity that may not see any of it", () => {
  it("schedule list says the identity may not see schedules, in the web UI's words", async () => {
    const server = emptyFor(reader);
    const plain = await emptyFor(reader).run(["schedule", "list"]);
    const r = await server.run(["schedule", "list"], { env: TOKEN });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
    expect(r.stderr).toBe(
      "identity reader may not see schedules: listing them needs the schedule permission on a workflow (it may read, start)\n",
    );
    expect(server.requests.filter((q) => q.path === "/v1/me")).toHaveLength(1);
  });

  it("says that rather than the filter matching nothing", async () => {
    const r = await emptyFor(reader).run(["schedule", "list", "--workflow", "Billing"], { env: TOKEN });
    expect(r.stderr).toBe(
      "identity reader may not see schedules: listing them needs the schedule permission on a workflow (it may read, start)\n",
    );
  });

  it("ps, workflow list and workers say the same of read", async () => {
    const none = { name: "pusher", kind: "client", allow: [{ workflows: ["Billing"], actions: ["start"] }] };
    const ps = await emptyFor(none).run(["ps"], { env: TOKEN });
    expect([ps.code, ps.stderr]).toEqual([
      0,
      "identity pusher may not see executions: listing them needs the read permission on a workflow (it may start)\n",
    ]);
    const wf = await emptyFor({ ...none, allow: [] }).run(["workflow", "list"], { env: TOKEN });
    expect([wf.code, wf.stderr]).toEqual([
      0,
      "identity pusher may not see workflows: listing them needs the read permission on a workflow (it may do nothing)\n",
    ]);
    // The workers list shows those of workflows the caller may read (a tester's `orbit workers`).
    const workers = await emptyFor(none).run(["workers"], { env: TOKEN });
    expect([workers.code, workers.stderr]).toEqual([
      0,
      "identity pusher may not see workers: listing them needs the read permission on a workflow (it may start)\n",
    ]);
  });

  it("says nothing, and asks nothing, with --json, without a token, or for an identity that may", async () => {
    const json = emptyFor(reader);
    const r = await json.run(["schedule", "list", "--json"], { env: TOKEN });
    expect([r.stdout, r.stderr, asked(json)]).toEqual(['{"schedules":[],"next_cursor":null}\n', "", false]);
    const open = emptyFor(reader);
    expect((await open.run(["schedule", "list"])).stderr).toBe("");
    expect(asked(open)).toBe(false);
    const scheduler = { ...reader, allow: [{ workflows: ["Billing"], actions: ["schedule"] }] };
    expect((await emptyFor(scheduler).run(["schedule", "list"], { env: TOKEN })).stderr).toBe("");
    // A worker lists the executions of its workflows without `read`.
    const worker = { name: "pool", kind: "worker", allow: [{ workflows: ["Billing"], actions: [] }] };
    expect((await emptyFor(worker).run(["ps"], { env: TOKEN })).stderr).toBe("");
  });

  it("a server without /v1/me (older) leaves the list as it was", async () => {
    const server = new FakeServer((req) =>
      req.path.startsWith("/v1/schedules") ? { status: 200, body: { schedules: [], next_cursor: null } } : undefined,
    );
    const r = await server.run(["schedule", "list"], { env: TOKEN });
    expect([r.code, r.stderr]).toEqual([0, ""]);
  });
});
