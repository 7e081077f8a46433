// @ts-check
/**
 * One row of the schedules list (list.js): id, workflow, timing, state, last outcome with what
 * went wrong, next fire, last fire and the actions.
 */
import { actionButtons } from "./actions.js";
import { h, iso } from "./dom.js";
import { outcomeEl, relativeEl, stateBadge, timeEl, timingText, workflowName } from "./format.js";
import { lastTickLine, skippedTick } from "./last-tick.js";
import { waitingEl } from "./no-worker.js";

/**
 * The next fire as the API gives it, milliseconds included (a jittered or `.150`-anchored fire):
 * cut to the second it read as an instant up to a second earlier than the real one. The
 * milliseconds are set smaller. The instant is one word (it wrapped after its `T` when the table
 * was short of room, which read as two values).
 * @param {string | null | undefined} iso
 */
function nextFireEl(iso) {
  const el = timeEl(iso);
  const ms = iso ? /^(.*)(\.\d+)Z$/.exec(iso) : null;
  if (ms) el.replaceChildren(ms[1] ?? "", h("small", { class: "ms", text: ms[2] ?? "" }), "Z");
  return el;
}

/** Up to this many characters a timing (`cron "…"`) never wraps: every ordinary expression. */
const WHOLE_TIMING = 36;

/**
 * A timing's text, whole in its title. Up to {@link WHOLE_TIMING} characters it is one line; a
 * longer one (`0 0 1 JAN,FEB,…,DEC MON,TUE,…,FRI`, 77 characters, never wrapped, made the list
 * 1,583 px wide in its 1,232 px box at 1280 px, every row's actions out of it; on a phone a
 * 52-character one was cut at the card's edge) may wrap between fields and after a comma, never
 * inside a token, and takes at most that width (pictures.css).
 * @param {string} text
 * @param {string} title
 */
function timingEl(text, title) {
  if (text.length <= WHOLE_TIMING) return h("code", { class: "timing", text, title });
  // Each token (up to a space or after a comma) unbreakable in itself: a browser also breaks after
  // a hyphen before a letter, "JAN-" / "FEB" (a re-tester). The spaces stay as typed between them.
  const parts = text.split(/(?<=,)|(?= )/);
  return h(
    "code",
    { class: "timing long", title },
    parts.flatMap((p, i) => {
      const token = h("span", { class: "token", text: p.trimStart() });
      const space = p.slice(0, p.length - p.trimStart().length);
      return i === 0 ? [token] : [space === "" ? h("wbr", {}) : space, token];
    }),
  );
}

/**
 * The timing as the CLI prints it, an ordinary expression on one line and a cron's time zone under it, so
 * that a long zone (America/Argentina/Buenos_Aires) does not widen the column past the actions.
 * @param {any} sch
 */
function timingCell(sch) {
  const title = timingText(sch);
  if (sch.cron === undefined) return [timingEl(title, title)];
  return [
    timingEl(`cron "${sch.cron}"`, title),
    h("div", { class: "muted small timing-zone", text: sch.timezone ?? "UTC" }),
  ];
}

/**
 * Whether the last run that ended was cancelled by the schedule's own next occurrence (overlap
 * `cancel_previous`, the server's reason, src/scheduler/start-request.ts): a grey CANCELLED with
 * no edge read as someone's cancel, while a schedule whose every run is replaced never gets its
 * work done (a tester's `s-cp`: 38 fired, 0 completed).
 * @param {any} sch
 */
function replacedLast(sch) {
  const o = sch.last_outcome;
  const reason = `schedule \`${sch.schedule_id}\`: replaced by the next occurrence (overlap cancel_previous)`;
  return o?.status === "CANCELLED" && typeof o.error === "string" && o.error.startsWith(reason);
}

/**
 * The last outcome of a schedule whose occurrences cannot start (`last_error`): START FAILED, red,
 * is its badge, as the CLI's OUTCOME says it, and the last run that ended, long before, is greyed
 * under it ("last run COMPLETED"): its green badge read healthy beside the red text (a tester).
 * @param {any} sch
 */
function startFailedEl(sch) {
  return h(
    "span",
    { class: "start-failed" },
    h("span", { class: "badge status-failed", text: "START FAILED" }),
    sch.last_outcome
      ? h("div", { class: "small last-run" }, h("span", { class: "muted", text: "last run " }), outcomeEl(sch))
      : null,
  );
}

/**
 * The row's edge: red when failing, amber when its last occurrence did not start (missed, skipped,
 * as the ledger draws a skip), its last run was replaced, or it waits for a worker (list.js sets `no-worker-row` once the server said so).
 * @param {any} sch
 * @param {boolean} failing
 * @param {boolean} waiting
 */
function rowClass(sch, failing, waiting) {
  if (failing) return "failing";
  const amber = [
    skippedTick(sch) ? "skipped-last" : "",
    replacedLast(sch) ? "replaced-last" : "",
    waiting ? "no-worker-row" : "",
  ];
  return amber.filter((c) => c !== "").join(" ");
}

/**
 * @param {any} sch
 * @param {() => Promise<void>} refresh
 * @param {string | null} waiting the "waiting: no live worker polls …" line, when the server said its last execution is RUNNING
 */
export function scheduleRow(sch, refresh, waiting) {
  const href = `#/schedules/${encodeURIComponent(sch.schedule_id)}`;
  const next = sch.next_fire_at;
  // A schedule whose occurrences cannot start (last_error) is as much in trouble as one whose runs
  // fail; so is one whose last run was cancelled and its compensation failed (the outcome is
  // CANCELLED, grey, but what the run had done was not undone).
  const compensationFailed = sch.last_outcome?.error_type === "CompensationFailed";
  const failing =
    (sch.consecutive_failures ?? 0) > 0 ||
    sch.last_outcome?.status === "FAILED" ||
    !!sch.last_error ||
    compensationFailed;
  return h(
    "tr",
    { dataset: { scheduleId: sch.schedule_id }, class: rowClass(sch, failing, waiting !== null) },
    h(
      "th",
      { scope: "row", "data-label": "Schedule" },
      // A schedule id holds no instant: it breaks where text does (after a hyphen), and anywhere as a
      // last resort. Kept whole up to 24 characters, ids such as "wide-long-cron-1" pushed a row's
      // actions 7 px past the box at 1280 px.
      h("a", { href, class: "schedule-id", text: sch.schedule_id }),
      // dir=auto: a right-to-left text clipped with "…" showed its end (its start was cut on the right).
      sch.description
        ? h("div", { class: "muted small clip", dir: "auto", text: sch.description, title: sch.description })
        : null,
    ),
    h("td", { "data-label": "Workflow" }, workflowName(sch.workflow, sch.version)),
    h("td", { "data-label": "Timing" }, ...timingCell(sch)),
    h(
      "td",
      { "data-label": "State" },
      stateBadge(sch.state),
      sch.pause_note
        ? h("div", { class: "note clip", dir: "auto", text: sch.pause_note, title: sch.pause_note })
        : null,
    ),
    h(
      "td",
      { "data-label": "Last outcome" },
      sch.last_error ? startFailedEl(sch) : outcomeEl(sch),
      lastTickLine(sch),
      replacedLast(sch)
        ? h("div", {
            class: "warn-text small replaced-note",
            text: "replaced before it finished",
            title:
              "the last run was cancelled by the schedule's next occurrence (overlap cancel_previous) before it finished; if every run is, the work never gets done (orbit doctor warns after 3 in a row)",
          })
        : null,
      compensationFailed
        ? h("div", {
            class: "error-text small clip compensation-failed",
            dir: "auto",
            text: sch.last_outcome.error ?? "compensation failed",
            title: sch.last_outcome.error ?? "compensation failed",
          })
        : null,
      sch.last_error
        ? h("div", {
            class: "error-text small clip start-error",
            text: `not starting: ${iso(sch.last_error)}`,
            title: sch.last_error,
          })
        : null,
      waiting ? waitingEl(waiting) : null,
    ),
    h(
      "td",
      { "data-label": "Next fire (UTC)" },
      nextFireEl(next),
      next ? h("div", { class: "muted small" }, relativeEl(next, { due: true })) : null,
    ),
    h(
      "td",
      { class: "num", "data-label": "Fired / skipped" },
      `${sch.fired} / `,
      h("span", { class: sch.skipped > 0 ? "warn-text" : "", text: sch.skipped }),
      // Occurrences waiting behind a running one (buffer_one, buffer_all): a backlog that grows
      // while runs outlast the period was seen only on the schedule's page.
      (sch.buffered?.length ?? 0) > 0
        ? h("div", {
            class: "small buffered-count",
            text: `${sch.buffered.length} buffered`,
            title: `waiting to start, oldest ${sch.buffered[0]}`,
          })
        : null,
    ),
    h("td", { class: "actions-cell", "data-label": "Actions" }, actionButtons(sch, refresh)),
  );
}
