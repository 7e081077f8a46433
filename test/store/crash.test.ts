/**
 * Kill -9 a process while it writes executions in transactions; reopen the database and check that
 * every commit it reported is there, whole, and nothing half-written is visible.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, expect, it } from "vitest";
import type { Store } from "../../src/store/store.js";
import { childArgs } from "../helpers/child.js";
import { describeEachDialect, type TestLocation } from "../helpers/db.js";

const CHILD = fileURLToPath(new URL("./fixtures/crash-child.ts", import.meta.url));

interface Run {
  child: ChildProcess;
  committed: string[];
  /** Resolves with the first stdout line matching `until`. */
  waitFor(until: (line: string, committed: number) => boolean): Promise<string>;
  exited: Promise<NodeJS.Signals | null>;
}

function runChild(location: TestLocation, env: Record<string, string>): Run {
  const child = spawn(process.execPath, childArgs(CHILD), {
    env: { ...process.env, ...location.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const committed: string[] = [];
  let stderr = "";
  let buffer = "";
  const waiters: { until: (line: string, n: number) => boolean; resolve: (line: string) => void }[] = [];
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.startsWith("committed ")) committed.push(line.slice("committed ".length));
      for (const w of waiters.splice(0)) {
        if (w.until(line, committed.length)) w.resolve(line);
        else waiters.push(w);
      }
      nl = buffer.indexOf("\n");
    }
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
  return {
    child,
    committed,
    exited,
    waitFor: (until) =>
      new Promise((resolve, reject) => {
        waiters.push({ until, resolve });
        void exited.then(() => reject(new Error(`child exited before the expected output; stderr:\n${stderr}`)));
      }),
  };
}

async function expectWhole(store: Store, committed: readonly string[], absent: readonly string[]): Promise<void> {
  for (const id of committed) {
    const execution = await store.getExecution(id);
    expect(execution, `committed ${id} is missing`).not.toBeNull();
    expect((await store.listEvents(id)).map((e) => e.type)).toEqual(["WorkflowCreated", "Second"]);
    expect(await store.getTaskForExecution(id)).not.toBeNull();
  }
  for (const id of absent) {
    expect(await store.getExecution(id)).toBeNull();
    expect(await store.listEvents(id)).toEqual([]);
    expect(await store.getTaskForExecution(id)).toBeNull();
  }
  // Whatever else is there (a commit whose line was not printed before the kill) is whole too.
  const all = await store.listExecutions({ limit: 10_000 });
  for (const e of all) {
    expect((await store.listEvents(e.executionId)).length, `${e.executionId} is half-written`).toBe(2);
  }
  expect(all.length).toBeGreaterThanOrEqual(committed.length);
}

describeEachDialect("crash safety (SIGKILL mid-transaction)", (dialect) => {
  let location: TestLocation | null = null;
  let child: ChildProcess | null = null;
  afterEach(async () => {
    child?.kill("SIGKILL");
    await location?.destroy();
    location = child = null;
  });

  it("loses no commit and shows nothing of the transaction that was open", async () => {
    location = await dialect.createLocation();
    const run = runChild(location, { ORBIT_CRASH_MODE: "hang", ORBIT_CRASH_COMMITS: "25" });
    child = run.child;
    const open = await run.waitFor((line) => line.startsWith("open "));
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    expect(run.committed).toHaveLength(25);
    const store = await location.open();
    await expectWhole(store, run.committed, [open.slice("open ".length)]);
  });

  it.each([
    ["at an arbitrary point of a stream of transactions", "stream", 40],
    ["among concurrent transactions (SQLite commits them in groups)", "concurrent", 120],
  ] as const)("loses no commit when killed %s", async (_, mode, commits) => {
    location = await dialect.createLocation();
    const run = runChild(location, { ORBIT_CRASH_MODE: mode });
    child = run.child;
    await run.waitFor((_line, committed) => committed >= commits);
    run.child.kill("SIGKILL");
    expect(await run.exited).toBe("SIGKILL");
    const store = await location.open();
    await expectWhole(store, [...run.committed], []);
  });
});
