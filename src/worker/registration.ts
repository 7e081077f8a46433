/**
 * A worker's registration of its workflows (`POST /v1/workflows`, docs/workflows.md § Running a
 * worker): at start, waiting for a server that is not up yet, and again when a poll says the
 * server's database no longer holds versions the worker runs.
 */
import type { Clock } from "../domain/clock.js";
import { OrbitError } from "../domain/errors.js";
import { thrownText } from "./errors.js";
import { LoggedSpell } from "./logged-spell.js";
import { isRetryable, type ProtocolClient } from "./protocol-client.js";
import type { WorkflowDefinition, WorkflowLogger } from "./workflow.js";

/** What registering needs of its worker. */
export interface Registering {
  api: ProtocolClient;
  /** The worker's definitions by `name@version`. */
  definitions: ReadonlyMap<string, WorkflowDefinition>;
  clock: Clock;
  log: WorkflowLogger;
  /** The worker closing: registering stops waiting. */
  closing: AbortSignal;
}

/**
 * Registers each workflow. A server not up yet (started beside the worker, restarting) or without
 * its database (503) is waited for, a retry every second as polls do (and said as they are: once,
 * then every 30 s; it was a line a second), until close(); anything else (a refused token, a
 * schema the server refuses) is the worker's mistake and rejects run().
 */
export async function registerWorkflows(r: Registering): Promise<void> {
  const spell = new LoggedSpell(r.clock, r.log, {
    first: "registering the workflows failed; retrying every 1 s",
    still: "registering the workflows still fails; retrying every 1 s",
    again: "workflows registered",
    counted: "failed_registrations",
  });
  for (;;) {
    try {
      await registerEach(r);
      spell.succeeded();
      return;
    } catch (err) {
      if (!isRetryable(err)) throw err;
      if (r.closing.aborted) return;
      spell.failed(err);
      await r.clock.sleep(1000, r.closing);
      if (r.closing.aborted) return;
    }
  }
}

/**
 * The server's database no longer holds these versions (replaced, or restored from an older
 * backup, under this running worker): registered again, so their executions can start. A failure
 * is said and left to the next poll, which names them again.
 */
export async function registerAgain(
  r: Registering,
  versions: readonly { name: string; version: string }[],
): Promise<void> {
  const keys = new Set(versions.map((v) => `${v.name}@${v.version}`));
  r.log.warn(
    "the server does not know workflows this worker runs (its database was replaced or restored?); registering them again",
    { workflows: [...keys] },
  );
  await registerEach(r, (key) => keys.has(key)).catch((err: unknown) =>
    r.log.warn("registering the workflows again failed; the next poll tries again", { error: thrownText(err) }),
  );
}

async function registerEach(r: Registering, only: (key: string) => boolean = () => true): Promise<void> {
  for (const [key, w] of r.definitions) {
    if (!only(key)) continue;
    try {
      await r.api.registerWorkflow(
        {
          name: w.name,
          version: w.version,
          ...(w.input !== undefined ? { input_schema: w.input } : {}),
          ...(w.description !== undefined ? { description: w.description } : {}),
        },
        r.closing,
      );
    } catch (err) {
      // Anything else, a retryable one too, is registerWorkflows()'s to decide.
      if (!(err instanceof OrbitError) || err.code !== "ALREADY_EXISTS") throw err;
      // The server holds this version with another input schema: run it anyway, and fail each
      // task whose input this definition's schema refuses (docs/outcomes.md).
      r.log.warn("the server has this workflow version with another input schema", {
        workflow: `${w.name}@${w.version}`,
        error: err.message,
      });
    }
  }
}
