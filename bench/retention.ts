/**
 * Retention while firing (docs/operations.md § Retention): fireDue() latency of 100 due schedules,
 * repeated, on a SQLite store holding N ended executions, without and then with the pruner deleting
 * them at the same time. `npm run bench:retention -- 200000` (N defaults to 100 000).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Execution } from "../src/domain/execution.js";
import { Retention } from "../src/engine/retention.js";
import { SqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { makeHarness, ORDER_INPUT } from "../test/scheduler/harness.js";

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = 60;
const dir = mkdtempSync(join(tmpdir(), "orbit-bench-retention-"));
const store = new SqliteStore({ dataDir: dir });
await store.open();
const h = await makeHarness(store, { now: "2026-11-15T00:00:00.000Z" });
const t0 = h.clock.now();
for (let from = 0; from < N; from += 5000) {
  const batch: Execution[] = [];
  for (let i = from; i < Math.min(N, from + 5000); i++) {
    batch.push({
      executionId: `old-${i}`,
      workflow: "OrderProcessing",
      version: "1.0.0",
      input: ORDER_INPUT,
      status: "COMPLETED",
      scheduleId: null,
      trigger: null,
      result: { ok: true },
      error: null,
      cancelReason: null,
      traceParent: null,
      concurrencyKey: null,
      run: 1,
      attempt: 1,
      createdMs: t0 - 90 * 86_400_000 + i,
      startedMs: t0 - 90 * 86_400_000 + i,
      endedMs: t0 - 90 * 86_400_000 + i,
    } as Execution);
  }
  await store.transaction(async (tx) => {
    await tx.insertExecutions(batch);
    await tx.insertFirstEvents(
      batch.map((e) => ({ executionId: e.executionId, type: "WorkflowCreated", data: {}, atMs: e.createdMs })),
    );
  });
}
for (let i = 0; i < 100; i++) {
  await h.scheduler.schedules.create({
    schedule_id: `s${i}`,
    workflow: "OrderProcessing",
    interval: "1m",
    overlap: "allow",
    input: ORDER_INPUT,
  });
}
const sizeMb = (): string => (statSync(join(dir, "orbit.db")).size / 1e6).toFixed(1);
console.log(
  `N=${N} ended executions, db ${sizeMb()} MB, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);

async function rounds(label: string): Promise<void> {
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    h.clock.advance(60_000);
    const start = performance.now();
    await h.scheduler.loop.fireDue();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const q = (p: number): string => (ms[Math.min(ms.length - 1, Math.floor(p * ms.length))] ?? 0).toFixed(1);
  console.log(`${label}: fireDue of 100 schedules p50 ${q(0.5)} ms p99 ${q(0.99)} ms max ${q(1)} ms`);
}

await rounds("without pruning");
const retention = new Retention({ store, clock: h.clock, maxAgeMs: 30 * 86_400_000 });
const started = performance.now();
const pruning = retention.runOnce();
await rounds("while pruning   ");
const deleted = await pruning;
console.log(
  `pruned ${deleted} in ${((performance.now() - started) / 1000).toFixed(1)} s; db ${sizeMb()} MB afterwards (SQLite reuses freed pages; VACUUM shrinks), load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
await store.close();
rmSync(dir, { recursive: true, force: true });
