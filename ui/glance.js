// @ts-check
/**
 * A schedule's page at a glance: its last outcome, consecutive failures, last success and
 * failure, and the next fire in UTC, in the schedule's zone and in the viewer's.
 */
import { h, scrollBox } from "./dom.js";
import { executionLink, outcomeEl, timeEl, viewerZone, zoneText } from "./format.js";
import { lastTickItem, skippedTick } from "./last-tick.js";

/**
 * Last outcome and failures at a glance, and the next fire in three zones.
 * @param {any} sch
 * @param {any[]} rows the ledger's newest rows, oldest last
 * @param {number} readMax the most ledger rows read: with as many, older dead letters are not counted
 * @param {{count: number, more: boolean}} [open] the schedule's executions that have not ended
 * @param {boolean} [waiting] its last run waits, and the page says why (detail.js): amber
 */
export function glance(sch, rows, readMax, open = { count: 0, more: false }, waiting = false) {
  const o = sch.last_outcome;
  const failures = sch.consecutive_failures ?? 0;
  // An occurrence that could not start is a dead letter, counted in "skipped", not a failed run:
  // a schedule whose every occurrence became one read "0 failed", as if healthy.
  const dead = rows.filter((row) => row.kind === "dead_letter").length || sch.dead_letters?.length || 0;
  const deadText = `${dead}${rows.length >= readMax ? "+" : ""}`;
  const next = sch.next_fire_at;
  const zone = sch.timezone ?? "UTC";
  const failing = failures > 0 || dead > 0;
  // The last occurrence did not start (missed, skipped): amber, as the ledger draws a skip.
  const skipped = !failing && skippedTick(sch) !== null;
  // A last run that waits (no worker polls its workflow, the only one died): amber, as the list's row.
  const warn = !failing && !skipped && waiting;
  return h(
    "section",
    {
      class: `glance card${failing ? " failing" : skipped ? " skipped-last" : warn ? " waiting-last" : ""}`,
      "aria-label": "At a glance",
    },
    h(
      "div",
      { class: "glance-item" },
      h("span", { class: "glance-label", text: "Last outcome" }),
      outcomeEl(sch),
      // Its id breaks only after a colon, each instant in it whole (executionLink): at 1280 px
      // "nightly-orders:2026-11-15T01:00:00Z" broke mid-token.
      o?.execution_id ? h("div", { class: "small" }, executionLink(o.execution_id)) : null,
      // A worker's multi-line error keeps its lines (they ran into one), in a box of bounded height.
      // A cancelled run's is why it was cancelled (the CLI's "reason"): under the FAILED its
      // streak still reads, it is not the failures' error (what failed while compensating stays red).
      o?.error
        ? h("div", {
            class: `${cancelReason(o) ? "muted" : "error-text"} small glance-error`,
            ...scrollBox(cancelReason(o) ? "Last run's cancel reason" : "Last run's error"),
            text: cancelReason(o) ? `cancel reason: ${o.error}` : o.error,
          })
        : null,
    ),
    lastTickItem(sch),
    // Runs that have not ended: after a backfill of hundreds waiting for a worker, the page read
    // "last outcome -" with no hint that any were waiting.
    open.count > 0
      ? h(
          "div",
          { class: "glance-item glance-open" },
          h("span", { class: "glance-label", text: "Not ended yet" }),
          h("strong", { class: "big", text: `${open.count}${open.more ? "+" : ""}` }),
          h(
            "div",
            { class: "small" },
            h("a", {
              href: `#/executions?schedule_id=${encodeURIComponent(sch.schedule_id)}&status=RUNNING`,
              text: `${open.count === 1 && !open.more ? "execution" : "executions"} running or waiting for a worker`,
            }),
          ),
        )
      : null,
    h(
      "div",
      { class: "glance-item" },
      h("span", { class: "glance-label", text: "Consecutive failures" }),
      h("strong", { class: failures > 0 ? "error-text big" : "big", text: String(failures) }),
      sch.failures !== undefined ? h("div", { class: "muted small", text: `${sch.failures} failed in all` }) : null,
    ),
    dead > 0
      ? h(
          "div",
          { class: "glance-item glance-dead-letters" },
          h("span", { class: "glance-label", text: "Dead letters" }),
          h("strong", { class: "error-text big", text: deadText }),
          h("div", { class: "muted small", text: "occurrences that could not start (counted as skipped)" }),
        )
      : null,
    h(
      "div",
      { class: "glance-item" },
      h("span", { class: "glance-label", text: "Last success / failure" }),
      h("div", { class: "small" }, "✓ ", timeEl(sch.last_success_at)),
      h("div", { class: "small" }, "✗ ", timeEl(sch.last_failure_at)),
    ),
    h(
      "div",
      { class: "glance-item zones" },
      h("span", { class: "glance-label", text: "Next fire" }),
      next
        ? h(
            "dl",
            { class: "zone-list" },
            h("dt", { text: "UTC" }),
            h("dd", {}, h("time", { datetime: next, class: "mono token", text: next })),
            zone !== "UTC"
              ? [h("dt", { text: zone }), h("dd", { dataset: { zone: "schedule" }, text: zoneText(next, zone) })]
              : null,
            h("dt", { text: `You (${viewerZone()})` }),
            h("dd", { dataset: { zone: "viewer" }, text: zoneText(next) }),
          )
        : h("span", { class: "muted", text: sch.paused ? "paused" : "none" }),
    ),
  );
}

/**
 * Whether the outcome's error is only why the run was cancelled.
 * @param {any} o
 */
function cancelReason(o) {
  return o.status === "CANCELLED" && !o.error_type;
}
