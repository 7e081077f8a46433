/** How schedules and instants read in the UI: the CLI's words, UTC first, local time on hover. */
import { h } from "./dom.js";

/** `cron "0 2 * * *" Europe/Berlin` or `every 10s`, as `orbit schedule list` prints it. */
export function timingText(s) {
  if (s.cron !== undefined) return `cron "${s.cron}" ${s.timezone ?? "UTC"}`;
  return `every ${s.interval ?? "?"}`;
}

/** The workflow, with `@version` when the schedule pins one. */
export function workflowText(s) {
  return s.version === undefined ? s.workflow : `${s.workflow}@${s.version}`;
}

const localFormat = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/** The browser's local rendering of an instant, e.g. `Nov 15, 2026, 07:51:10 PM GMT+1`. */
export function localText(iso) {
  return localFormat.format(new Date(iso));
}

/** `in 9s`, `3 min ago`: relative to the browser's clock. */
export function relativeText(iso, now = Date.now()) {
  const diff = Date.parse(iso) - now;
  const abs = Math.abs(diff);
  let text;
  if (abs < 1000) return "now";
  if (abs < 60_000) text = `${Math.round(abs / 1000)}s`;
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`;
  else if (abs < 86_400_000) text = `${(abs / 3_600_000).toFixed(1).replace(/\.0$/, "")} h`;
  else text = `${(abs / 86_400_000).toFixed(1).replace(/\.0$/, "")} d`;
  return diff > 0 ? `in ${text}` : `${text} ago`;
}

/** A `<time>` showing the API's UTC instant, with the local time as its hover title. */
export function timeEl(iso, fallback = "-") {
  if (iso === null || iso === undefined) return h("span", { class: "muted", text: fallback });
  return h("time", { datetime: iso, title: `local: ${localText(iso)}`, text: iso });
}

/** The short UTC label of an axis tick: `18:50` within a day, `Nov 15` beyond. */
export function tickLabel(ms, spanMs) {
  const iso = new Date(ms).toISOString();
  if (spanMs <= 120_000) return `${iso.slice(11, 19)}Z`;
  if (spanMs <= 2 * 86_400_000) return `${iso.slice(11, 16)}Z`;
  return `${iso.slice(5, 10)} ${iso.slice(11, 16)}Z`;
}

/** The state badge: active, paused, ended. */
export function stateBadge(state) {
  return h("span", { class: `badge state-${state}`, text: state });
}

/** The status badge of an execution: RUNNING, COMPLETED, FAILED, CANCELLED, COMPENSATING. */
export function statusBadge(status) {
  return h("span", { class: `badge status-${String(status).toLowerCase()}`, text: status });
}
