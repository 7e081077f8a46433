/**
 * The worker's watch on the leases it can no longer renew (docs/workflows.md § Steps run at least
 * once). A task none of whose heartbeats the server acknowledged for longer than its lease (a
 * network partition, the server away, this process paused) has most likely been reaped and given
 * to another attempt, maybe on another worker: its run's `ctx.signal` aborts, so a step that
 * honours it stops instead of running beside the next attempt's. Before, the signal aborted only
 * when a heartbeat's answer said the lease was lost, which a partition never delivers: a tester's
 * step ran on for 60 s while another worker ran it too, and ended 18 s after the execution had
 * COMPLETED elsewhere.
 */
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import type { TaskControl } from "./task-control.js";
import type { WorkflowLogger } from "./workflow.js";

export interface LeaseWatch {
  clock: Clock;
  log: WorkflowLogger;
  /** The runs the worker holds now. */
  running(): Iterable<TaskControl>;
  /** The longest sleep between two looks (the heartbeat interval: a task leased meanwhile is looked at). */
  everyMs(): number;
  /** Sends a heartbeat now (or as soon as the one in flight has its answer). */
  heartbeatNow(): void;
  /** Ends the watch. */
  stop: AbortSignal;
}

/**
 * How long before a lease's end on the worker's clock it asks for a heartbeat (one acknowledged
 * meanwhile keeps the signal), and how long a run whose clock moved past that end at once waits for
 * the heartbeat asked for then. Such a jump (the process resumed after a pause, a step of the
 * system clock) is not by itself the proof: an answer says whether the server kept the lease (it
 * answers `lost` when it did not). A partition answers nothing, and its runs abort at the lease's
 * end, before the server hands the task to the next attempt (after the lease and a back-off).
 */
export const UNHEARD_GRACE_MS = 2000;

/**
 * The server itself answered a heartbeat 503 (its database away; not a proxy's 503, which has no
 * Orbit body, nor a 408): it noted the tasks, and keeps their leases through its outage
 * (docs/workflows.md § Leases), so they count as heard.
 */
export function answeredAway(err: unknown): boolean {
  return err instanceof OrbitError && err.code === "UNAVAILABLE" && err.details?.httpStatus === 503;
}

/** How many execution ids one line names (the count says the rest). */
const NAMED = 10;

/** Watches until `stop` aborts: sleeps to the earliest lease end not heard of, aborts what is past it. */
export async function watchLeases(o: LeaseWatch): Promise<void> {
  /** When each run was first seen within UNHEARD_GRACE_MS of its lease's end (a heartbeat asked for then). */
  const nearSince = new Map<TaskControl, number>();
  while (!o.stop.aborted) {
    const now = o.clock.now();
    let next = now + o.everyMs();
    let ask = false;
    const aborted: TaskControl[] = [];
    const running = new Set(o.running());
    for (const control of nearSince.keys()) if (!running.has(control)) nearSince.delete(control);
    for (const control of running) {
      const from = control.unheardFrom;
      if (from === null || control.leaseUnheard || control.leaseLost || control.runSettled) {
        nearSince.delete(control);
        continue;
      }
      if (now < from - UNHEARD_GRACE_MS) {
        nearSince.delete(control);
        next = Math.min(next, from - UNHEARD_GRACE_MS);
        continue;
      }
      let since = nearSince.get(control);
      if (since === undefined) {
        since = now;
        nearSince.set(control, now);
        ask = true;
      }
      if (now > from && now - since >= UNHEARD_GRACE_MS) {
        nearSince.delete(control);
        if (control.abortIfUnheard(now)) aborted.push(control);
      } else next = Math.min(next, Math.max(from + 1, since + UNHEARD_GRACE_MS));
    }
    if (ask) o.heartbeatNow();
    if (aborted.length > 0) say(o.log, aborted, now);
    await o.clock.sleep(Math.max(1, next - now), o.stop);
  }
}

/** One line for the runs aborted at one look (in a spell, all at once but for tasks leased since). */
function say(log: WorkflowLogger, aborted: TaskControl[], now: number): void {
  const first = aborted[0]!;
  const unheardS = Math.round((now - (first.unheardFrom ?? now) + first.task.lease_ms) / 1000);
  log.warn(
    "no heartbeat was acknowledged by the server for longer than the lease: these runs' ctx.signal is aborted (their leases have most likely ended, and their executions may run again elsewhere); what they still report counts only if the server kept their leases",
    {
      tasks: aborted.length,
      execution_ids: aborted.slice(0, NAMED).map((c) => c.task.execution_id),
      unheard_s: unheardS,
      lease_ms: first.task.lease_ms,
    },
  );
}
