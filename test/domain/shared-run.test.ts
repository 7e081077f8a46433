/** SharedRuns (src/domain/shared-run.ts): what `GET /v1/doctor` runs once for concurrent callers. */
import { expect, it } from "vitest";
import { SharedRuns } from "../../src/domain/shared-run.js";

it("runs once for the calls that come while a key's run goes on, again after it ends, apart per key", async () => {
  const runs = new SharedRuns<number>();
  let started = 0;
  let finish = (): void => undefined;
  const slow = () =>
    new Promise<number>((resolve) => {
      started++;
      const n = started;
      finish = () => resolve(n);
    });
  const first = runs.run("alice", slow);
  const second = runs.run("alice", slow);
  const other = runs.run("bob", async () => 99);
  expect(started).toBe(1);
  finish();
  expect(await Promise.all([first, second, other])).toEqual([1, 1, 99]);
  // Never kept: the next call runs anew.
  const third = runs.run("alice", slow);
  expect(started).toBe(2);
  finish();
  expect(await third).toBe(2);
  // A failed run is not kept either.
  await expect(runs.run("carol", async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
  expect(await runs.run("carol", async () => 7)).toBe(7);
});
