// @ts-check
/**
 * A schedule's Backfill dialog: the occurrences of a past range start now (POST …/backfill), each
 * once. It counts the range's occurrences as the range is typed, by the server's timing code.
 */
import { errorText, reload, say } from "./actions.js";
import { ApiError, backfillSchedule, previewTiming } from "./api.js";
import { ask, h, setText } from "./dom.js";

/** Occurrences one `GET /v1/preview` lists, at most. */
const PAGE = 50;
/**
 * Occurrences the dialog counts, at most (20 previews). The server starts up to 10,000 in one
 * backfill, all of them: past this the dialog says "more than 1,000" and that all will start.
 */
export const COUNT_MAX = 1000;
/** How soon a count the server could not answer (it was down) is tried again. */
const RETRY_MS = 3000;

/**
 * How many occurrences of `sch` lie in [from, to], both ends inclusive, by the server's own timing
 * code (`GET /v1/preview`, 50 at a time, each page from the last time of the one before), counted
 * up to `max + 1` (more than `max`). The backfill dialog's count said "more than 49" of a range of
 * 879, and Backfill started all 879.
 * @param {any} sch
 * @param {string} from
 * @param {string} to
 * @param {number} max
 * @param {() => boolean} stale true once another range was typed: the count stops (null)
 * @returns {Promise<number | null>}
 */
async function countRange(sch, from, to, max, stale) {
  const end = Date.parse(to);
  let after = new Date(Date.parse(from) - 1).toISOString();
  let n = 0;
  while (n <= max) {
    const { next_fire_times: times } = await previewTiming({
      cron: sch.cron,
      interval: sch.interval,
      timezone: sch.timezone,
      dst: sch.dst,
      start_at: sch.start_at,
      end_at: sch.end_at,
      from: after,
      count: PAGE,
    });
    if (stale()) return null;
    const inRange = times.filter((/** @type {string} */ t) => Date.parse(t) <= end);
    n += inRange.length;
    // A short page, or one that passes the range's end: every occurrence is counted.
    if (inRange.length < PAGE || times.length < PAGE) return n;
    after = times[times.length - 1];
  }
  return n;
}

/**
 * The sentence the backfill dialog shows for a range (how many occurrences it holds, or what is
 * wrong with it) and the count, null when not known (more than COUNT_MAX counts as COUNT_MAX + 1).
 * @param {any} sch
 * @param {string} from
 * @param {string} to
 * @param {() => boolean} stale
 * @returns {Promise<[string, number | null]>}
 */
async function rangeCount(sch, from, to, stale) {
  const bad = rangeProblem(from, to);
  if (bad !== null) return [bad, null];
  const n = await countRange(sch, from, to, COUNT_MAX, stale);
  if (n === null) return ["Counting…", null];
  if (n <= COUNT_MAX) return [occurrencesText(n), n];
  const cap = COUNT_MAX.toLocaleString("en");
  return [
    `The range holds more than ${cap} occurrences (the dialog counts up to ${cap}); Backfill starts all of them.`,
    n,
  ];
}

/**
 * What the dialog says while the backfill runs, from the range's count: "Starting 879
 * occurrences…", with the time since it was sent beside it.
 * @param {number | null} n
 */
function startingText(n) {
  if (n === null) return "Starting the range's occurrences…";
  if (n > COUNT_MAX) return `Starting more than ${COUNT_MAX.toLocaleString("en")} occurrences…`;
  return `Starting ${n.toLocaleString("en")} occurrence${n === 1 ? "" : "s"}…`;
}

/** "23 s", "1 min 05 s". @param {number} ms */
function elapsedText(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}

/** How often the time a running backfill has taken is said again. */
const TICK_MS = 1000;

/** The most occurrences the range the dialog opens with holds. */
export const DEFAULT_MAX = 100;
/**
 * The ranges the dialog may open with, each ending now, longest first: the longest that holds at
 * most {@link DEFAULT_MAX} occurrences. A minute holds at most 61 (the shortest period is 1 s).
 */
const DEFAULT_SPANS_MS = [24, 12, 6, 3, 1].map((h) => h * 3_600_000).concat([30, 15, 5, 1].map((m) => m * 60_000));

/** @param {number} ms */
const isoSecond = (ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * The start of the range the dialog opens with: the last day, or less when a day holds more than
 * {@link DEFAULT_MAX} occurrences (a 3 s schedule's 28,800 were one click away). The spans are
 * counted together; a count the server could not answer takes the shortest span.
 * @param {any} sch
 * @param {number} now
 */
async function defaultFrom(sch, now) {
  const to = isoSecond(now);
  const fits = await Promise.all(
    DEFAULT_SPANS_MS.map(async (span) => {
      try {
        const n = await countRange(sch, isoSecond(now - span), to, DEFAULT_MAX, () => false);
        return n !== null && n <= DEFAULT_MAX;
      } catch {
        return false;
      }
    }),
  );
  const i = fits.indexOf(true);
  return isoSecond(now - (DEFAULT_SPANS_MS[i] ?? DEFAULT_SPANS_MS[DEFAULT_SPANS_MS.length - 1] ?? 60_000));
}

/** @param {number} n */
function occurrencesText(n) {
  return `The range holds ${n.toLocaleString("en")} occurrence${n === 1 ? "" : "s"}.`;
}

/**
 * What is wrong with a range the dialog can tell without asking the server, or null.
 * @param {string} from
 * @param {string} to
 */
function rangeProblem(from, to) {
  const start = Date.parse(from);
  const end = Date.parse(to);
  if (Number.isNaN(start)) return `"${from}" is not an RFC 3339 time.`;
  if (Number.isNaN(end)) return `"${to}" is not an RFC 3339 time.`;
  if (end < start) return "The range ends before it starts.";
  return null;
}

/**
 * Backfill: the occurrences of a past range start now (each once: they are idempotent). The
 * dialog opens on its first field, not on Backfill (Enter at once started a day of executions),
 * with a range of at most {@link DEFAULT_MAX} occurrences, and counts the range's occurrences as it
 * is typed.
 * @param {any} sch
 * @param {() => Promise<void>} done
 */
export async function backfill(sch, done) {
  const at = Date.now();
  const now = isoSecond(at);
  // Chosen before the dialog opens: a From filled in under the caret would replace what was typed.
  const start = await defaultFrom(sch, at);
  const from = h("input", { id: "backfill-from", value: start, class: "mono", autocomplete: "off" });
  const to = h("input", { id: "backfill-to", value: now, class: "mono", autocomplete: "off" });
  const count = h("p", { id: "backfill-count", class: "muted", "aria-live": "polite", text: "Counting…" });
  // While a backfill runs (10,000 starts took 92 s): what it does and for how long so far. The
  // seconds are hidden from screen readers, which would read them out every second.
  const elapsed = h("span", { class: "backfill-elapsed", "aria-hidden": "true" });
  const startingLine = h("span");
  const progress = h("p", { id: "backfill-progress", role: "status", hidden: true }, startingLine, " ", elapsed);
  /** The count of the range last counted (null: not known). */
  let counted = /** @type {number | null} */ (null);
  /** @type {HTMLButtonElement | null} */
  let confirmButton = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let retry;
  let unavailable = false;
  let seq = 0;
  /** Disables Backfill while a count is under way (`data-hold` keeps it so past a refused backfill). */
  const hold = (/** @type {boolean} */ on) => {
    if (confirmButton === null) return;
    // While a backfill is being sent the dialog keeps its buttons disabled, and re-enables them.
    if (!sending) confirmButton.disabled = on;
    confirmButton.dataset.hold = String(on);
  };
  let sending = false;
  // Backfill waits for the count of the range typed: the last range's count stayed up for the
  // 10 s a recount took on a slow link, and Backfill could be clicked under it.
  const recount = async () => {
    const mine = ++seq;
    clearTimeout(retry);
    count.textContent = "Counting…";
    hold(true);
    let text;
    /** @type {number | null} */
    let n = null;
    let down = false;
    try {
      [text, n] = await rangeCount(sch, from.value.trim(), to.value.trim(), () => mine !== seq);
    } catch (err) {
      text = errorText(err);
      down = err instanceof ApiError && (err.status === 0 || err.code === "UNAVAILABLE");
    }
    if (mine !== seq || !from.isConnected) return;
    setText(count, text);
    counted = n;
    hold(false);
    // A count refused while the server was down stayed so after it came back: it tries again.
    unavailable = down;
    if (down) retry = setTimeout(() => void recount(), RETRY_MS);
  };
  const onFocus = () => {
    if (unavailable) void recount();
  };
  // A refusal the server gave for the range typed before is not about this one: cleared as it is
  // changed (it stayed red under "The range holds 3 occurrences.").
  const clearRefusal = () => {
    const error = from.closest("dialog")?.querySelector("#dialog-error");
    if (error) error.textContent = "";
  };
  for (const input of [from, to]) {
    input.addEventListener("input", () => {
      clearRefusal();
      void recount();
    });
  }
  const answer = ask({
    heading: `Backfill ${sch.schedule_id}?`,
    body: "Starts every occurrence of the range (both ends inclusive) that has not started yet.",
    confirmLabel: "Backfill",
    extra: [
      h("label", { for: "backfill-from", text: "From (RFC 3339, UTC)" }),
      from,
      h("label", { for: "backfill-to", text: "To (RFC 3339, UTC)" }),
      to,
      count,
      progress,
    ],
    focus: from,
    // A refusal is said in the dialog, which stays open with the range typed.
    confirm: async () => {
      // What the dialog already knows is wrong is not sent (a 400 and a console error for it).
      const bad = rangeProblem(from.value.trim(), to.value.trim());
      if (bad !== null) return bad;
      sending = true;
      // Awaited up to 10 minutes (api.js BACKFILL_ANSWER_MS), its progress said meanwhile, the
      // page behind refreshing (app.js): it showed a greyed button, then TIMEOUT after 10 s, and
      // never the result, though the server went on and finished (a tester).
      // The monotonic clock: the wall clock may be set meanwhile.
      const sentAt = performance.now();
      const tick = () => {
        elapsed.textContent = elapsedText(performance.now() - sentAt);
      };
      startingLine.textContent = startingText(counted);
      tick();
      progress.hidden = false;
      const ticking = setInterval(tick, TICK_MS);
      if (dialog) dialog.dataset.refreshBehind = "true";
      try {
        const r = await backfillSchedule(sch.schedule_id, from.value.trim(), to.value.trim());
        const n = (/** @type {number} */ v) => v.toLocaleString("en");
        say(
          `backfill ${r.start_at} … ${r.end_at}: ${n(r.occurrences)} occurrences, ${n(r.started)} started, ${n(r.already_existed)} already existed`,
        );
        return null;
      } catch (err) {
        return errorText(err);
      } finally {
        sending = false;
        clearInterval(ticking);
        progress.hidden = true;
        if (dialog) delete dialog.dataset.refreshBehind;
      }
    },
  });
  const dialog = from.closest("dialog");
  confirmButton = dialog?.querySelector("button[value=ok]") ?? null;
  // Escape would close the dialog while the backfill runs, and its result would be said nowhere in it.
  dialog?.addEventListener("cancel", (event) => {
    if (sending) event.preventDefault();
  });
  window.addEventListener("focus", onFocus);
  void recount();
  const ok = await answer;
  window.removeEventListener("focus", onFocus);
  clearTimeout(retry);
  seq++;
  if (ok === null) return;
  await reload(done);
}
