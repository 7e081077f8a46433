/**
 * The worker's batched completes (src/worker/completions.ts) against a server stand-in that refuses
 * what the real one refuses: a body naming a task twice is 400 for the whole request. A tester saw
 * 71 runs that had returned fail for good as `ResultRefused`: a worker whose server was frozen past
 * a lease got one task again as attempt 2 while attempt 1's completion waited, both went in one
 * request, and the 400 failed every run in it.
 */
import { expect, it } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";
import type { JsonValue } from "../../src/domain/json.js";
import { Completions } from "../../src/worker/completions.js";
import type { ProtocolClient } from "../../src/worker/protocol-client.js";

type Sent = { task_id: string; attempt?: number; result: JsonValue }[];

/** A stand-in for the server's POST /v1/worker/complete; `refuse` answers a whole request 400. */
function server(refuse: (tasks: Sent) => string | null) {
  const requests: string[][] = [];
  let release: () => void = () => {};
  const firstHeld = new Promise<void>((resolve) => {
    release = resolve;
  });
  const api = {
    async completeMany(tasks: Sent) {
      requests.push(tasks.map((t) => `${t.task_id}#${t.attempt}`));
      if (requests.length === 1) await firstHeld;
      const refused = refuse(tasks);
      if (refused !== null) throw new OrbitError("INVALID_ARGUMENT", refused);
      return { tasks: Object.fromEntries(tasks.map((t) => [t.task_id, { status: "COMPLETED" }])) };
    },
  } as unknown as ProtocolClient;
  return { api, requests, release: () => release() };
}

const twice = (tasks: Sent): string | null => {
  const ids = tasks.map((t) => t.task_id);
  const repeated = ids.find((id, i) => ids.indexOf(id) !== i);
  return repeated === undefined ? null : `tasks: task ${repeated} appears twice`;
};

it("never names a task twice in one request: two attempts of one task go in two", async () => {
  const s = server(twice);
  const completions = new Completions(s.api);
  const first = completions.complete({ task_id: "A", attempt: 1 }, null, 1000, 4);
  await new Promise((resolve) => setImmediate(resolve));
  // While A's request is in flight: T's first attempt, T again (leased anew here), and U.
  const rest = [
    completions.complete({ task_id: "T", attempt: 1 }, null, 1000, 4),
    completions.complete({ task_id: "T", attempt: 2 }, null, 1000, 4),
    completions.complete({ task_id: "U", attempt: 1 }, null, 1000, 4),
  ];
  s.release();
  await expect(Promise.all([first, ...rest])).resolves.toEqual([null, null, null, null]);
  expect(s.requests).toEqual([["A#1"], ["T#1"], ["T#2", "U#1"]]);
});

it("a request refused as a whole goes again one task a request, so only the task refused fails", async () => {
  // The server refuses any request that holds "bad".
  const s = server((tasks) => (tasks.some((t) => t.task_id === "bad") ? "tasks[1].result: refused" : null));
  const completions = new Completions(s.api);
  const first = completions.complete({ task_id: "A", attempt: 1 }, null, 1000, 4);
  await new Promise((resolve) => setImmediate(resolve));
  const good = completions.complete({ task_id: "good", attempt: 1 }, null, 1000, 4);
  const bad = completions.complete({ task_id: "bad", attempt: 1 }, null, 1000, 4);
  const after = completions.complete({ task_id: "after", attempt: 1 }, null, 1000, 4);
  s.release();
  await expect(first).resolves.toBeNull();
  await expect(good).resolves.toBeNull();
  await expect(bad).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  await expect(after).resolves.toBeNull();
  expect(s.requests).toEqual([["A#1"], ["good#1", "bad#1", "after#1"], ["good#1"], ["bad#1"], ["after#1"]]);
});
