/**
 * What a run's code did with the steps its earlier attempts journaled. Journaled results are found
 * by step name, so code changed under the same version (a step renamed, moved, inserted or taken
 * out by a deploy mid-execution) is not refused: a renamed step runs again under its new name (a
 * card charged under `charge` was charged again under `charge-card`, and the execution ended
 * COMPLETED without a word; a tester). These are the signs the worker can see, and says
 * (docs/workflows.md § Determinism): a journaled step the code reached out of its journaled order,
 * and journaled steps the code never reached by the time its run ended.
 *
 * Order is compared only while the run awaits its steps one at a time: steps in flight together
 * (Promise.all) are journaled in the order they finished, and replayed at once in the order they
 * were called.
 */

import type { TaskJson } from "../domain/worker-protocol.js";
import type { WorkflowLogger } from "./workflow.js";

const BUMP = "Journaled results are found by step name: bump the workflow's version when its steps change";

export class ReplayOrder {
  /** The journaled steps' names in their journal's order (seq). */
  private readonly order: string[];
  private readonly met = new Set<string>();
  /** The first step of `order` the code has not reached. */
  private nextUnmet = 0;
  /** Steps called and not settled. */
  private inFlight = 0;
  /** Two steps were in flight at once: the order is not compared for the rest of the attempt. */
  private concurrent = false;
  private said = false;

  constructor(
    private readonly task: TaskJson,
    private readonly log: WorkflowLogger,
  ) {
    this.order = [...task.steps].sort((a, b) => a.seq - b.seq).map((s) => s.name);
  }

  /** A step was called; `settled` ends it (called once its promise settles). */
  called(): () => void {
    this.inFlight++;
    if (this.inFlight > 1) this.concurrent = true;
    return () => {
      this.inFlight--;
    };
  }

  /** A journaled step was reached (its result replayed). */
  replayed(name: string): void {
    const expected = this.order[this.nextUnmet];
    this.met.add(name);
    while (this.nextUnmet < this.order.length && this.met.has(this.order[this.nextUnmet] as string)) this.nextUnmet++;
    if (expected === undefined || expected === name || this.said) return;
    // Said once the calls made at this moment are made: a step called beside this one (in one
    // Promise.all) makes the run concurrent, and its order is then not compared.
    queueMicrotask(() => {
      if (this.concurrent || this.said) return;
      this.said = true;
      const { execution_id, workflow, version } = this.task;
      this.log.warn(
        `execution ${execution_id} of ${workflow}@${version} reached step ${JSON.stringify(name)} before step ${JSON.stringify(expected)}, which its run journaled first: the workflow's code changed under the same version, or does not run the same steps in the same order on a replay. ${BUMP}`,
        { version, step: name, expected, journaled: this.order },
      );
    });
  }

  /** Journaled steps the code did not reach, in their journal's order. */
  unreached(): string[] {
    return this.order.filter((name) => !this.met.has(name));
  }

  /**
   * Said when the run ended (`ended`: COMPLETED, FAILED, or continued as new) without reaching
   * journaled steps: those are not run again, and whatever now stands in their place was run.
   */
  sayUnreached(ended: string): void {
    const steps = this.unreached();
    if (steps.length === 0) return;
    const { execution_id, workflow, version } = this.task;
    this.log.warn(
      `execution ${execution_id} of ${workflow}@${version} ${ended} without reaching ${steps.length === 1 ? "step" : "steps"} ${steps.map((s) => JSON.stringify(s)).join(", ")} that its run journaled: the workflow's code changed under the same version (a step renamed or taken out), or does not run the same steps on a replay. ${BUMP}`,
      { version, steps },
    );
  }
}
