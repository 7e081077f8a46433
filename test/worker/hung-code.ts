/** Helpers for tests of the worker's runs (worker-log, run-log, hung-after-cancel, step-types). */
import type { ManualClock } from "../../src/clock/manual-clock.js";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import type { Worker, WorkflowLogger } from "../../src/index.js";

/** One turn of the event loop. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Moves the worker's clock on a second at a time (each time it sleeps) until `read` gives what
 * `done` accepts, at most `seconds` times; the last value read.
 */
export async function secondsUntil<T>(
  clock: ManualClock,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  seconds = 200,
): Promise<T> {
  let value = await read();
  for (let s = 0; s < seconds && !done(value); s++) {
    while (clock.pendingSleeps === 0) await turn();
    clock.advance(1000);
    await turn();
    value = await read();
  }
  return value;
}

/** Closes a worker whose run's code never returns: close() hands it back after closeTimeoutMs of `clock`. */
export async function closeWithHungCode(worker: Worker, clock: ManualClock, running: Promise<void>): Promise<void> {
  const closing = worker.close();
  for (let s = 0; s < 40; s++) {
    if (clock.pendingSleeps > 0) clock.advance(1000);
    await turn();
  }
  await closing;
  await running;
}

/** A leased task as the server hands it, for a TaskContext without a server. */
export function taskJson(overrides: Partial<TaskJson> = {}): TaskJson {
  return {
    task_id: "t",
    execution_id: "e",
    workflow: "W",
    version: "1.0.0",
    run: 1,
    attempt: 1,
    input: {},
    trigger: null,
    schedule_id: null,
    status: "RUNNING",
    cancel_requested: null,
    steps: [],
    lease_ms: 30_000,
    heartbeat_ms: 10_000,
    ...overrides,
  };
}

type Line = [level: string, message: string, fields: Record<string, unknown> | undefined];

/** A worker logger that keeps every line, in order. */
export function capturing(): { lines: Line[]; logger: WorkflowLogger } {
  const lines: Line[] = [];
  const at = (level: string) => (m: string, f?: Record<string, unknown>) => void lines.push([level, m, f]);
  return { lines, logger: { info: at("info"), warn: at("warn"), error: at("error") } };
}
