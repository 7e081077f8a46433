/** The engine over a store on a manual clock: what an engine test drives without a server. */
import { ManualClock } from "../../src/clock/manual-clock.js";
import { Executions } from "../../src/engine/executions.js";
import { TaskWakeups } from "../../src/engine/task-wakeups.js";
import { WorkerTasks } from "../../src/engine/tasks.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { Store } from "../../src/store/store.js";

/** Workflows, executions and worker tasks over `store` at `atMs`, with `workflow`@1.0.0 registered. */
export async function engineAt(store: Store, atMs: number, workflow: string) {
  const clock = new ManualClock(atMs);
  const workflows = new Workflows({ store, clock });
  const executions = new Executions({ store, clock, workflows });
  const tasks = new WorkerTasks({ store, clock, executions, workflows, wakeups: new TaskWakeups(clock) });
  await workflows.register({ name: workflow, version: "1.0.0" });
  return { clock, workflows, executions, tasks };
}
