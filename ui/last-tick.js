// @ts-check
/**
 * A schedule's last occurrence when it did not start: its `last_tick` (the newest ledger row, with
 * the schedule's JSON) is `skipped`, with a reason. The last outcome is the last run that ended, so
 * a schedule whose only occurrence was missed (the server down over its time, past its catch-up)
 * read "-", "0 consecutive failures", as if healthy. Drawn as the ledger draws a skip: the amber
 * `ledger-skipped` badge, "skipped: missed".
 */
import { h, instantNodes } from "./dom.js";
import { timeEl } from "./format.js";

/** Why an occurrence is skipped, by reason (docs/scheduling.md § Every occurrence accounted for). */
const WHY = /** @type {Record<string, string>} */ ({
  missed: "it was not fired in time (the server was down or behind) and its catch-up policy did not start it",
  overlap: "the schedule's previous run was still going (overlap)",
  concurrency: "its concurrency key was held by another schedule's run",
  buffer_full: "the overlap buffer was full",
});

/**
 * The schedule's last ledger row when it is the skip of an occurrence, else null. A manual trigger
 * not started (`occurrence: null`) is no occurrence of the schedule, and the status line said it.
 * @param {any} sch
 */
export function skippedTick(sch) {
  const t = sch.last_tick;
  return t && t.kind === "skipped" && (t.occurrence != null || t.range_from !== undefined) ? t : null;
}

/** @param {any} t a skipped ledger row */
function badge(t) {
  return h("span", { class: "badge ledger-skipped", text: `skipped: ${t.reason ?? "other"}` });
}

/**
 * What the skip covers: one occurrence or a missed range.
 * @param {any} t
 */
function whenText(t) {
  if (typeof t.count === "number" && t.count > 1) return `${t.count} occurrences, ${t.range_from} … ${t.range_to}`;
  return t.occurrence ?? t.range_from;
}

/**
 * The sentence saying it whole: "The last occurrence, 2026-…Z, did not start: skipped (missed): …".
 * @param {any} t
 */
export function skippedText(t) {
  const many = typeof t.count === "number" && t.count > 1;
  const why = WHY[t.reason] ?? t.reason ?? "skipped";
  return `${many ? "The last" : "The last occurrence,"} ${whenText(t)}, did not start: skipped (${t.reason}): ${why}`;
}

/**
 * The line under a list row's last outcome: the badge, the sentence in its title.
 * @param {any} sch
 */
export function lastTickLine(sch) {
  const t = skippedTick(sch);
  if (t === null) return null;
  return h(
    "div",
    { class: "small last-tick", title: skippedText(t) },
    h("span", { class: "muted", text: "last occurrence " }),
    badge(t),
  );
}

/**
 * The schedule page's "Last occurrence" at a glance, when it did not start.
 * @param {any} sch
 */
export function lastTickItem(sch) {
  const t = skippedTick(sch);
  if (t === null) return null;
  const many = typeof t.count === "number" && t.count > 1;
  return h(
    "div",
    { class: "glance-item glance-last-tick" },
    h("span", { class: "glance-label", text: "Last occurrence" }),
    badge(t),
    h(
      "div",
      { class: "small" },
      many ? instantNodes(`${t.count} missed, ${t.range_from} … ${t.range_to}`) : timeEl(whenText(t)),
    ),
    h("div", { class: "muted small", text: `not started: ${WHY[t.reason] ?? t.reason ?? "skipped"}` }),
  );
}
