// @ts-check
/**
 * How long an execution has run and how late it started, in the words `orbit status` uses
 * (`elapsed: 6.2s`): a running execution's page showed neither, so a run stuck for an hour looked
 * like one that had just begun.
 */
import { h } from "./dom.js";

const pad2 = (/** @type {number} */ n) => (n < 10 ? `0${n}` : `${n}`);

/**
 * `259ms`, `10.3s`, then `5m12s`, `3h04m`, `2d05h`: the CLI's short durations (src/cli/durations.ts).
 * @param {number} ms
 */
export function shortDuration(ms) {
  const total = Math.max(0, Math.floor(ms));
  if (total < 1000) return `${total}ms`;
  const tenths = Math.round(total / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  const s = Math.max(60, Math.floor(total / 1000));
  if (s < 3600) return `${Math.floor(s / 60)}m${pad2(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad2(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad2(Math.floor((s % 86_400) / 3600))}h`;
}

/** @param {any} e */
const isLive = (e) => e.status === "RUNNING" || e.status === "COMPENSATING";

/**
 * The elapsed time as text: `ended − started`, or `now − started` and "so far" while it runs. The
 * current run counts from its retry, as in the CLI.
 * @param {any} e the execution
 * @param {string | null} runStartedAt when a retry started the current run, else null
 * @param {number} now
 * @param {boolean} [taken] whether a worker has taken the current run (a `WorkflowTaskStarted` event)
 */
export function elapsedText(e, runStartedAt, now, taken = true) {
  const started = runStartedAt ?? e.started_at;
  if (!started) return "- (not started)";
  if (e.ended_at) return shortDuration(Date.parse(e.ended_at) - Date.parse(started));
  // Queued, no worker has taken it: "59.4s so far (running)" read as if it ran.
  if (isLive(e) && !taken) return `- (waiting for a worker for ${shortDuration(now - Date.parse(started))})`;
  if (isLive(e)) return `${shortDuration(now - Date.parse(started))} so far (${e.status.toLowerCase()})`;
  return "-";
}

/**
 * The "Elapsed" fact, kept up to date every second while the execution runs (the page redraws
 * only when the server's answer changes, every 5 s at most). The timer stops once the element
 * has left the page.
 * @param {any} e
 * @param {string | null} runStartedAt
 * @param {boolean} [taken]
 */
export function elapsedEl(e, runStartedAt, taken = true) {
  const el = h("span", { class: "elapsed", text: elapsedText(e, runStartedAt, Date.now(), taken) });
  if (isLive(e) && (runStartedAt ?? e.started_at)) {
    const timer = setInterval(() => {
      if (!el.isConnected) {
        clearInterval(timer);
        return;
      }
      el.textContent = elapsedText(e, runStartedAt, Date.now(), taken);
    }, 1000);
  }
  return el;
}

/**
 * How late a scheduled execution started: "started 4m12s after its scheduled time", or "on time"
 * under a second (a fire is a few milliseconds late). Null without a scheduled time (a manual start).
 * Until a worker has taken it, it is queued, not started: it read "started 16d00h after its
 * scheduled time" while no worker polled. A schedule's jitter is part of the delay, and said so.
 * Once taken, the delay runs to when a worker took it (its first `WorkflowTaskStarted`), not to
 * `started_at`, which the server sets when it creates the execution: a run a worker took 21.5 s
 * late read "started on time (84ms after its scheduled time)" above a timeline that said +21.46 s.
 * When the two differ by a second or more, both are said.
 * @param {any} e
 * @param {boolean} [taken] whether a worker has taken the current run
 * @param {string} [jitter] the schedule's jitter, when it has one
 * @param {string | null} [takenAt] when a worker first took the execution (its first `WorkflowTaskStarted`)
 */
export function lateText(e, taken = true, jitter = undefined, takenAt = null) {
  const due = e.trigger?.scheduled_for;
  if (!due || !e.started_at) return null;
  const created = Date.parse(e.started_at) - Date.parse(due);
  if (Number.isNaN(created)) return null;
  const withJitter = jitter ? ` (includes the schedule's jitter of up to ${jitter})` : "";
  const took = taken && takenAt ? Date.parse(takenAt) - Date.parse(due) : Number.NaN;
  if (!Number.isNaN(took) && took - created >= 1000) {
    return `created ${delay(created)}${withJitter}; a worker took it at ${takenAt}, ${delay(took)}`;
  }
  const late = Number.isNaN(took) ? created : took;
  const verb = taken ? "started" : "queued";
  const waiting = taken || !isLive(e) ? "" : "; no worker has taken it yet";
  if (late < 0) return `${verb} ${delay(late)}${waiting}`;
  return `${verb} ${delay(late)}${withJitter}${waiting}`;
}

/**
 * A delay from the scheduled time: "4m12s after its scheduled time", "on time (84ms after its
 * scheduled time)" under a second, "2.0s before its scheduled time".
 * @param {number} ms
 */
function delay(ms) {
  if (ms < 0) return `${shortDuration(-ms)} before its scheduled time`;
  if (ms < 1000) return `on time (${shortDuration(ms)} after its scheduled time)`;
  return `${shortDuration(ms)} after its scheduled time`;
}
