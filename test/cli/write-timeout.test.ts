/**
 * A write whose answer does not come may have been carried out: a trigger said "did not answer in
 * time" (exit 1) had started its execution, and the natural retry started a second one; a create
 * retried said "already exists" (a tester). The CLI sends every write with an Idempotency-Key (its
 * own unless given), and when the answer does not come it says the change may or may not have been
 * made and names the key to repeat it with. A read's message is unchanged.
 */
import { describe, expect, it } from "vitest";
import { OrbitClient } from "../../src/client/client.js";
import { request } from "../../src/client/http.js";
import { FakeServer } from "./fake-server.js";
import { runCli } from "./run-cli.js";

const env = { ORBIT_SERVER: "http://orbit.test:7233" };
const timeout = (): never => {
  throw new DOMException("The operation was aborted due to timeout", "TimeoutError");
};
const NO_ANSWER =
  "the Orbit server at http://orbit.test:7233 did not answer in time (busy, or waiting for its database: its log and /readyz say which)";

/** A fetch that records each request's method, path and Idempotency-Key, and answers with `answer`. */
function recording(answer: (method: string) => Response | never) {
  const seen: Array<{ method: string; path: string; key: string | null }> = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const method = init?.method ?? "GET";
    seen.push({
      method,
      path: new URL(String(input)).pathname,
      key: new Headers(init?.headers).get("idempotency-key"),
    });
    return answer(method);
  }) as typeof globalThis.fetch;
  return { seen, fetch };
}

describe("a write without its answer", () => {
  it("says the trigger may or may not have been made, and names the key that makes a retry safe", async () => {
    const { seen, fetch } = recording(timeout);
    const r = await runCli(["schedule", "trigger", "s2"], { fetch, env });
    expect(r.code).toBe(1);
    const key = seen[0]?.key ?? "";
    expect(seen).toEqual([{ method: "POST", path: "/v1/schedules/s2/trigger", key }]);
    expect(key).toMatch(/^orbit-cli-[0-9a-f-]{36}$/);
    expect(r.stderr).toBe(
      `orbit: ${NO_ANSWER}; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key ${key} (within 24 hours): the server then answers what the first did, or does it now if it had not, never twice\n`,
    );
    // The retry as said sends that key.
    const again = recording(timeout);
    await runCli(["schedule", "trigger", "s2", "--idempotency-key", key], { fetch: again.fetch, env });
    expect(again.seen[0]?.key).toBe(key);
  });

  it("names the key given with --idempotency-key", async () => {
    const { fetch } = recording(timeout);
    const r = await runCli(["start", "W", "--idempotency-key", "mine-1"], { fetch, env });
    expect(r.stderr).toContain(
      "the change may or may not have been made: to retry it safely run the same command again with --idempotency-key mine-1 ",
    );
  });

  it("a connection that broke after sending is as uncertain; one refused is not", async () => {
    const reset = (async () => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }) });
    }) as typeof fetch;
    const broke = await runCli(["schedule", "create", "x", "--workflow", "W", "--interval", "1h"], {
      fetch: reset,
      env,
    });
    expect(broke.stderr).toMatch(
      /^orbit: cannot reach the Orbit server at http:\/\/orbit\.test:7233 \(is `orbit server` running\?\): ECONNRESET; the change may or may not have been made: to retry it safely run the same command again with --idempotency-key orbit-cli-/,
    );
    const refused = (async () => {
      throw new TypeError("fetch failed", { cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) });
    }) as typeof fetch;
    const none = await runCli(["schedule", "delete", "x"], { fetch: refused, env });
    expect(none.stderr).toBe(
      "orbit: cannot reach the Orbit server at http://orbit.test:7233 (is `orbit server` running?)\n",
    );
  });

  it("a read's message is unchanged", async () => {
    const { seen, fetch } = recording(timeout);
    const r = await runCli(["schedule", "get", "s2"], { fetch, env });
    expect(r.stderr).toBe(`orbit: ${NO_ANSWER}\n`);
    expect(seen[0]?.key).toBeNull();
  });

  it("an apply, sent without a key, is said to be safe to run again", async () => {
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const file = join(mkdtempSync(join(tmpdir(), "orbit-wt-")), "s.yaml");
    writeFileSync(file, "- {schedule_id: a, workflow: W, interval: 1h}\n");
    const { fetch } = recording(timeout);
    const r = await runCli(["schedule", "apply", "-f", file], { fetch, env });
    expect(r.stderr).toBe(
      `orbit: ${NO_ANSWER}; the change may or may not have been made: \`orbit schedule apply\` run again makes the schedules match the file either way, and its plan shows what was left to do\n`,
    );
  });

  it("the client says it of a write too: repeat it with the key it carried, or look first", async () => {
    const { fetch } = recording(timeout);
    const client = new OrbitClient({ server: "http://orbit.test:7233", fetch });
    await expect(client.triggerSchedule("s2", {}, { idempotencyKey: "k-1" })).rejects.toThrow(
      `${NO_ANSWER}; POST /v1/schedules/s2/trigger may or may not have been carried out: send it again with the same Idempotency-Key ("k-1") within 24 hours to get its answer without doing it twice`,
    );
    await expect(client.triggerSchedule("s2")).rejects.toThrow(
      "POST /v1/schedules/s2/trigger may or may not have been carried out: read the current state before sending it again (a write sent with an Idempotency-Key can be repeated safely)",
    );
    // The worker's protocol repeats its own reports (leases make that safe): its message is a read's.
    await expect(
      request({ baseUrl: "http://orbit.test:7233", fetch }, { method: "POST", path: "/v1/worker/poll", body: {} }),
    ).rejects.toThrow(new RegExp(`^${NO_ANSWER.replace(/[()]/g, "\\$&")}$`));
    await expect(client.getSchedule("s2")).rejects.toThrow(new RegExp(`^${NO_ANSWER.replace(/[()]/g, "\\$&")}$`));
  });
});

it("every write the CLI sends carries an Idempotency-Key, its own when none is given", async () => {
  const server = new FakeServer(() => ({ status: 404, body: { code: "NOT_FOUND", message: "no" } }));
  const writes = [
    ["schedule", "create", "x", "--workflow", "W", "--interval", "1h"],
    ["schedule", "update", "x", "--interval", "2h"],
    ["schedule", "delete", "x"],
    ["schedule", "pause", "x"],
    ["schedule", "resume", "x"],
    ["schedule", "trigger", "x"],
    ["schedule", "backfill", "x", "--start-at", "2026-01-01T00:00:00Z", "--end-at", "2026-01-02T00:00:00Z"],
    ["start", "W"],
    ["cancel", "e"],
    ["retry", "e"],
    ["workflow", "register", "W@1.0.0"],
    ["workflow", "deprecate", "W@1.0.0"],
    ["workflow", "undeprecate", "W@1.0.0"],
  ];
  for (const argv of writes) await server.run(argv);
  const sent = server.requests.filter((r) => r.method !== "GET");
  expect(sent).toHaveLength(writes.length);
  for (const r of sent)
    expect(r.headers["idempotency-key"], `${r.method} ${r.path}`).toMatch(/^orbit-cli-[0-9a-f-]{36}$/);
  expect(new Set(sent.map((r) => r.headers["idempotency-key"])).size).toBe(writes.length);
});
