// @ts-check
/** How schedules and instants read in the UI: the CLI's words, UTC first, other zones beside. */
import { h, idNodes } from "./dom.js";

/**
 * `cron "0 2 * * *" Europe/Berlin` or `every 10s`, as `orbit schedule list` prints it.
 * @param {any} s
 */
export function timingText(s) {
  if (s.cron !== undefined) return `cron "${s.cron}" ${s.timezone ?? "UTC"}`;
  return `every ${s.interval ?? "?"}`;
}

/**
 * The workflow, with `@version` when the schedule pins one.
 * @param {any} s
 */
export function workflowText(s) {
  return s.version === undefined || s.version === null ? s.workflow : `${s.workflow}@${s.version}`;
}

/** Up to this many characters a workflow's name never wraps. */
const WHOLE_NAME = 24;

/**
 * A workflow's name (and `@version`) that wraps only between words: let to wrap anywhere, the
 * table broke "OrderProcessing" as "OrderProces / sing" at 1280 px with room to spare elsewhere.
 * A name up to {@link WHOLE_NAME} characters is kept whole; a longer one may wrap where a word
 * starts (camelCase, after `-`, `_` or `.`) and before its `@version`, so that rows as wide as
 * they get still leave room for the actions. A word longer than that breaks anywhere as a last
 * resort (a name may be 128 characters with no word in it): kept whole, a 116-character name made
 * the schedules list 1,816 px and the executions list 1,918 px wide in their 1,232 px boxes.
 * @param {string} workflow
 * @param {string | null} [version]
 */
export function workflowName(workflow, version = null) {
  const name = String(workflow);
  const at = version === undefined || version === null ? "" : `@${version}`;
  if (name.length <= WHOLE_NAME) return h("span", { class: "id-part", text: `${name}${at}` });
  const words = name.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[-_.])(?=.)/);
  const parts = [...words, ...(at ? [at] : [])];
  return h(
    "span",
    { class: "name-words" },
    parts.flatMap((w, i) => [
      i === 0 ? null : h("wbr", {}),
      w.length > WHOLE_NAME ? h("span", { class: "id-part long", text: w }) : w,
    ]),
  );
}

/** @type {Map<string, Intl.DateTimeFormat>} */
const formats = new Map();

/**
 * An instant in a zone (undefined: the browser's), e.g. `15 Nov 2026, 19:51:10 CET`.
 * @param {string} iso
 * @param {string} [zone]
 */
export function zoneText(iso, zone) {
  const key = zone ?? "";
  let f = formats.get(key);
  if (f === undefined) {
    f = new Intl.DateTimeFormat(undefined, {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      timeZoneName: "short",
      ...(zone ? { timeZone: zone } : {}),
    });
    formats.set(key, f);
  }
  return f.format(new Date(iso));
}

/**
 * The browser's local rendering of an instant, e.g. `Nov 15, 2026, 07:51:10 PM GMT+1`.
 * @param {string} iso
 */
export function localText(iso) {
  return zoneText(iso);
}

/** The browser's zone name, e.g. `Europe/Berlin`. */
export function viewerZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * `in 9s`, `3 min ago`: relative to the browser's clock. A fire that is due (`due`) and has passed
 * reads `due 3s ago`: the page has not yet heard that it fired (or the server is down).
 * @param {string} iso
 * @param {number} [now]
 * @param {boolean} [due] a fire the schedule is waiting for (a next fire, an upcoming one)
 */
export function relativeText(iso, now = Date.now(), due = false) {
  const diff = Date.parse(iso) - now;
  const abs = Math.abs(diff);
  let text;
  if (abs < 1000) return "now";
  if (abs < 60_000) text = `${Math.round(abs / 1000)}s`;
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`;
  else if (abs < 86_400_000) text = `${(abs / 3_600_000).toFixed(1).replace(/\.0$/, "")} h`;
  else text = `${(abs / 86_400_000).toFixed(1).replace(/\.0$/, "")} d`;
  if (diff > 0) return `in ${text}`;
  return due ? `due ${text} ago` : `${text} ago`;
}

/**
 * A relative time that keeps counting (`tickRelative`): drawn once per answer from the server, it
 * froze between refreshes and while the server was down, so a fire already past still read
 * "in 8s" 14 s later.
 * @param {string} iso
 * @param {{due?: boolean, now?: number}} [o] `due`: a fire the schedule waits for; `now`: the page's
 */
export function relativeEl(iso, o = {}) {
  return h("span", {
    class: "relative",
    dataset: { at: iso, ...(o.due ? { due: "true" } : {}) },
    text: relativeText(iso, o.now ?? Date.now(), o.due === true),
  });
}

/**
 * Rewrites every relative time in the page (`relativeEl`) for `now`, whatever the refreshes do.
 * @param {number} now
 */
export function tickRelative(now) {
  for (const el of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("span.relative[data-at]"))) {
    const text = relativeText(el.dataset.at ?? "", now, el.dataset.due === "true");
    if (el.textContent !== text) el.textContent = text;
  }
}

/**
 * A `<time>` showing the API's UTC instant, with the local time as its hover title.
 * @param {string | null | undefined} iso
 */
export function timeEl(iso, fallback = "-") {
  if (iso === null || iso === undefined) return h("span", { class: "muted", text: fallback });
  // One word (`.instant`): in the Settings card at 375 px "2026-12-" / "06T23:55:58.829Z" broke at its hyphen.
  return h("time", { datetime: iso, class: "instant", title: `local: ${localText(iso)}`, text: iso });
}

/**
 * The short UTC label of an axis tick, as precise as the step between ticks: `18:50Z` for steps of
 * whole minutes, `18:50:30Z` for shorter ones (ticks 30 s apart read `03:16Z 03:16Z 03:17Z`), the
 * date in front (`11-15 18:00Z`) beyond two days, the day alone (`11-15`) for steps of whole
 * days, the month (`2026-03`) for steps of months and the year (`2027`) for steps of years (a
 * year's span labelled `12-18` twice). Without a step, the span decides.
 * @param {number} ms
 * @param {number} spanMs
 * @param {number} [stepMs] the distance between ticks
 */
export function tickLabel(ms, spanMs, stepMs = 0) {
  const iso = new Date(ms).toISOString();
  if (stepMs >= 365 * 86_400_000) return iso.slice(0, 4);
  if (stepMs >= 28 * 86_400_000) return iso.slice(0, 7);
  if (stepMs >= 86_400_000 && stepMs % 86_400_000 === 0) return iso.slice(5, 10);
  const seconds = stepMs > 0 ? stepMs % 60_000 !== 0 : spanMs <= 120_000;
  const time = `${iso.slice(11, seconds ? 19 : 16)}Z`;
  return spanMs <= 2 * 86_400_000 ? time : `${iso.slice(5, 10)} ${time}`;
}

/**
 * The state badge: active, paused, ended.
 * @param {string} state
 */
export function stateBadge(state) {
  return h("span", { class: `badge state-${state}`, text: state });
}

/**
 * The status badge of an execution: RUNNING, COMPLETED, FAILED, CANCELLED, COMPENSATING.
 * @param {string} status
 */
export function statusBadge(status) {
  return h("span", { class: `badge status-${String(status).toLowerCase()}`, text: status });
}

/**
 * An execution's status badge: TIMED OUT for a run that hit its timeout (FAILED with error type
 * Timeout), as the schedule's outcome says it; the execution's page said FAILED.
 * @param {any} e
 */
export function executionBadge(e) {
  return e.status === "FAILED" && e.error?.type === "Timeout"
    ? h("span", { class: "badge status-failed timed-out", text: "TIMED OUT" })
    : statusBadge(e.status);
}

/**
 * A schedule's last outcome (docs/outcomes.md): its status badge and consecutive failures, or "-".
 * @param {any} sch
 */
export function outcomeEl(sch) {
  const o = sch.last_outcome;
  if (o === undefined || o === null) return h("span", { class: "muted", text: "-" });
  const failures = sch.consecutive_failures ?? 0;
  // A run that hit its timeout is FAILED with error_type Timeout; the CLI says TIMED OUT
  // (docs/outcomes.md), and so does the page.
  const timedOut = o.status === "FAILED" && o.error_type === "Timeout";
  // A cancelled run counts neither way, so the failures before it still stand: the schedule is
  // failing, as the CLI says (`FAILED x2`). A grey CANCELLED beside "2× in a row" read as two
  // cancels, as a tester found; the cancel is said after it.
  const cancelledFailing = o.status === "CANCELLED" && failures > 0;
  return h(
    "span",
    {
      class: "outcome",
      ...(cancelledFailing
        ? {
            title: `the last ended run was cancelled; a cancelled run counts neither way, so the ${failures} failed before it still count`,
          }
        : {}),
    },
    timedOut
      ? h("span", { class: "badge status-failed timed-out", text: "TIMED OUT" })
      : statusBadge(cancelledFailing ? "FAILED" : o.status),
    failures > 0 ? h("span", { class: "error-text small", text: ` ${failures}× in a row` }) : null,
    cancelledFailing ? h("span", { class: "muted small last-cancelled", text: " last run cancelled" }) : null,
  );
}

/**
 * The hash link of an execution.
 * @param {string} id
 */
export function executionLink(id) {
  return h("a", { href: `#/executions/${encodeURIComponent(id)}`, class: "mono" }, idNodes(id));
}

/**
 * The hash link of a schedule.
 * @param {string} id
 */
export function scheduleLink(id) {
  return h("a", { href: `#/schedules/${encodeURIComponent(id)}` }, idNodes(id));
}

/**
 * The hash link of a workflow.
 * @param {string} name
 * @param {string | Node} [label] what the link reads (the name)
 */
export function workflowLink(name, label = name) {
  return h("a", { href: `#/workflows/${encodeURIComponent(name)}` }, label);
}
