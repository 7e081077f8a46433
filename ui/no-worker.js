// @ts-check
/**
 * The schedules list's "waiting: no live worker polls …" line (docs/ui.md § The schedules list):
 * what the live workers poll, which rows may wait for want of one, and whether their last
 * executions are still RUNNING, asked of the server as `orbit schedule list --wide` does.
 */
import { ApiError, getExecution, listExecutions, listWorkflows } from "./api.js";
import { h } from "./dom.js";
import { polls, workersOrNull } from "./workflows.js";

/**
 * What the live workers poll, each workflow's name and `name@version`, with the version an unpinned
 * schedule's starts take (the highest not deprecated, else the highest) and every registered
 * version of each workflow (both null when the workflows cannot be listed), or null when the
 * workers cannot be listed (then no row claims that none does).
 * @returns {Promise<Polled | null>}
 */
export async function polledWorkflows() {
  // Any failure (no access to the workers, an older server) is "cannot be listed".
  const [workers, workflows] = await Promise.all([
    workersOrNull().catch(() => null),
    listWorkflows().catch(() => null),
  ]);
  if (workers === null) return null;
  const names = new Set(
    workers
      .filter((w) => w.status === "live")
      .flatMap((w) => polls(w).flatMap((f) => [f.name, `${f.name}@${f.version}`])),
  );
  if (workflows === null) return { names, latest: null, versions: null };
  /** @type {Map<string, string>} */
  const latest = new Map();
  /** @type {Map<string, string[]>} */
  const versions = new Map();
  for (const w of workflows) versions.set(w.name, [...(versions.get(w.name) ?? []), w.version]);
  // Highest first: the first not deprecated of each name, else its first.
  for (const w of workflows) if (w.deprecated_at === null && !latest.has(w.name)) latest.set(w.name, w.version);
  for (const w of workflows) if (!latest.has(w.name)) latest.set(w.name, w.version);
  return { names, latest, versions };
}

/**
 * The schedule's last execution may not have ended: the last outcome is an earlier one's, or none,
 * or a FAILED or CANCELLED one a retry may have sent round again (as `orbit schedule list` reads
 * it, src/cli/schedule-format.ts).
 * @param {any} sch
 */
export function lastRunPending(sch) {
  if (sch.last_execution_id == null) return false;
  // A FAILED or CANCELLED last run may have been retried since (run 2 of the same id): the page
  // showed the old outcome alone while the retry waited for a worker (a tester).
  const o = sch.last_outcome;
  return o?.execution_id !== sch.last_execution_id || o.status === "FAILED" || o.status === "CANCELLED";
}

/** @typedef {{ names: Set<string>, latest: Map<string, string> | null, versions: Map<string, string[]> | null }} Polled */

/**
 * Whether the row's last execution may wait for want of a worker, so the server is asked about it
 * ({@link runningLast}): {@link noWorkerText} says so by the schedule alone, or some registered
 * version of its workflow is polled by no live worker (a run started before the workers moved to a
 * newer version waits for a worker of its own, while the schedule's starts are polled).
 * @param {any} sch
 * @param {Polled | null} polled
 */
export function mayWaitForWorker(sch, polled) {
  if (noWorkerText(sch, polled) !== null) return true;
  const pending = lastRunPending(sch);
  return (
    pending &&
    polled !== null &&
    (polled.versions?.get(sch.workflow) ?? []).some((v) => !polled.names.has(`${sch.workflow}@${v}`))
  );
}

/**
 * Why the schedule's last execution would wait, when that is because no live worker runs what it
 * starts: its workflow, the version its last execution runs on (`running`, once the server said
 * which), or the version its starts take (its pin, else the latest; a version registered before
 * any worker runs it stalls the schedule as surely, docs/outcomes.md). Only a candidate: the last
 * execution differs from the last outcome's also when an earlier run ended after it (overlap
 * `allow`, `cancel_previous`, a backfill), and then every run may have ended; the row says it only
 * once the server said the last execution is RUNNING ({@link runningLast}).
 * @param {any} sch
 * @param {Polled | null} polled
 * @param {string} [running] the version the last execution is RUNNING on
 */
export function noWorkerText(sch, polled, running) {
  const pending = lastRunPending(sch);
  if (polled === null || !pending) return null;
  if (!polled.names.has(sch.workflow)) return `waiting: no live worker polls ${sch.workflow}`;
  if (running !== undefined && !polled.names.has(`${sch.workflow}@${running}`))
    return `waiting: no live worker polls ${sch.workflow}@${running}`;
  const version = sch.version ?? polled.latest?.get(sch.workflow);
  return version === undefined || polled.names.has(`${sch.workflow}@${version}`)
    ? null
    : `waiting: no live worker polls ${sch.workflow}@${version}`;
}

/** With more candidates than this, the RUNNING executions are listed once rather than each read. */
const READ_EACH_MAX = 100;

/**
 * Which of these last executions are still RUNNING, and on which version, asked of the server as `orbit schedule list`
 * does: each read (`GET /v1/executions/{id}`, 16 at a time) when there are at most
 * {@link READ_EACH_MAX} (a page has 50 rows), else the RUNNING executions listed once, following
 * `next_cursor`. An execution read as ended never runs again: it goes into `ended` and is not
 * asked again. `complete` is false when the server could not answer for some (no answer, a 5xx):
 * those read as not running, and the next refresh asks again.
 * @param {string[]} ids execution ids
 * @param {Set<string>} ended execution ids read as ended (added to)
 * @returns {Promise<{ running: Map<string, string>, complete: boolean }>}
 */
export async function runningLast(ids, ended) {
  const ask = [...new Set(ids)].filter((id) => !ended.has(id));
  /** @type {Map<string, string>} */
  const running = new Map();
  let complete = true;
  // A refusal (403) or an execution gone (404) is an answer: nothing to say. No answer is not.
  const unanswered = (/** @type {unknown} */ err) =>
    !(err instanceof ApiError) || err.status === 0 || err.status >= 500 || err.status === 429;
  if (ask.length <= READ_EACH_MAX) {
    for (let i = 0; i < ask.length; i += 16) {
      await Promise.all(
        ask.slice(i, i + 16).map(async (id) => {
          try {
            const e = await getExecution(id);
            if (e?.status === "RUNNING") running.set(id, e.version);
            else if (e?.status) ended.add(id);
          } catch (err) {
            if (unanswered(err)) complete = false;
          }
        }),
      );
    }
    return { running, complete };
  }
  const want = new Set(ask);
  /** @type {Map<string, string>} */
  const listed = new Map();
  try {
    /** @type {string | null} */
    let cursor = null;
    do {
      /** @type {any} */
      const page = await listExecutions({ status: "RUNNING", limit: 1000, cursor });
      for (const e of page.executions) listed.set(e.execution_id, e.version);
      cursor = page.next_cursor ?? null;
    } while (cursor !== null);
  } catch (err) {
    return { running, complete: !unanswered(err) };
  }
  for (const id of want) {
    const version = listed.get(id);
    if (version !== undefined) running.set(id, version);
  }
  return { running, complete };
}

/**
 * The amber "waiting: no live worker polls …" line under a row's last outcome.
 * @param {string} text
 */
export function waitingEl(text) {
  return h("div", { class: "warn-text small clip no-worker", text, title: text });
}
