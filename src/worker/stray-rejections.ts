/**
 * A promise that rejects with nobody to handle it (a step started without `await`, a stray
 * `Promise.reject` in workflow code) ends a Node 20 process by default: with it every run the
 * worker held lost its lease and ran its current step again 30 s later, and the execution whose
 * code did it crashed every worker that leased it again, up to its 20 lost leases (a tester). While
 * a worker runs, and unless the program listens for `unhandledRejection` itself, such a rejection
 * is logged by every running worker with the runs it holds, and the process goes on
 * (docs/workflows.md § Worker). Node cannot tell which run made the promise, so no run is failed
 * for it. One process listener serves every worker of the process, as signals.ts does.
 */
import { errorJson } from "./errors.js";
import type { WorkflowLogger } from "./workflow.js";

/** What a worker says of a stray rejection. */
type Witness = (reason: unknown) => void;

const witnesses = new Set<Witness>();

function onRejection(reason: unknown): void {
  for (const witness of witnesses) witness(reason);
}

/** The runs a worker holds, by task id. */
type Held = ReadonlyMap<string, { control: { task: { execution_id: string } } }>;

/**
 * Has `log` tell of each stray rejection, with `workerId` and the executions of the runs `held`,
 * until the returned function is called.
 */
export function witnessStrayRejections(log: WorkflowLogger, workerId: string, held: Held): () => void {
  // The program decides what a stray rejection does when it listens itself.
  if (witnesses.size === 0 && process.listenerCount("unhandledRejection") > 0) return () => undefined;
  const witness: Witness = (reason) => {
    const error = errorJson(reason);
    log.error(
      "a promise rejected and no code handled it (in workflow code: a step or promise not awaited?); the worker goes on, where Node would have ended the process and every run it holds",
      {
        worker_id: workerId,
        error: `${error.type}: ${error.message}`,
        running: [...held.values()].map((r) => r.control.task.execution_id),
      },
    );
  };
  if (witnesses.size === 0) process.on("unhandledRejection", onRejection);
  witnesses.add(witness);
  return () => {
    if (!witnesses.delete(witness) || witnesses.size > 0) return;
    process.removeListener("unhandledRejection", onRejection);
  };
}
