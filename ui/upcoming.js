// @ts-check
/**
 * A schedule's upcoming fires: the strip ("The next 5", "24 h", "7 days") and, under it, the list
 * of the same fires in UTC, in the schedule's zone and in the viewer's. The list follows the window
 * the buttons choose, as the strip does: it listed the next five under every window, so a weekly
 * cron's "7 days" drew one fire above a table running 28 days on. The 24-hour and 7-day windows are drawn
 * from the fires the server computes for the schedule's own timing (`GET /v1/preview`), not from
 * the five of `next_fire_times`: a per-minute cron's day showed five marks piled at "now", and a
 * daily cron's week five days with the rest empty, as if it would not fire on them.
 */
import { previewTiming } from "./api.js";
import { defaultWindow, upcomingStrip, WINDOWS } from "./charts.js";
import { h, instantNodes } from "./dom.js";
import { localText, relativeEl, viewerZone, zoneText } from "./format.js";

/** The most fires a window is drawn with: the preview's own limit. */
export const WINDOW_FIRES = 50;

/**
 * The fires of a window from the schedule's next one, as the scheduler computes them.
 * @param {any} sch
 * @param {number} now the browser's: a first fire before it is not read again
 * @returns {Promise<string[]>}
 */
async function windowFires(sch, now) {
  const first = Math.max(Date.parse(sch.next_fire_times[0]), now);
  const cron = sch.cron !== undefined && sch.cron !== null;
  const p = await previewTiming({
    ...(cron ? { cron: sch.cron, timezone: sch.timezone, dst: sch.dst } : { interval: sch.interval }),
    start_at: sch.start_at,
    end_at: sch.end_at,
    from: new Date(first - 1).toISOString(),
    count: WINDOW_FIRES,
  });
  return p.next_fire_times;
}

/**
 * The fires at or after `now`, the schedule's pending one at the time it is due, and no more than
 * the runs it has left. With a short interval the first of `next_fire_times` is often already past
 * in the browser (read up to 5 s ago): it was listed as "3s ago" and started the strip before now.
 * Its occurrence is not when it fires with `jitter` or while a refused start waits to be retried
 * (`next_fire_at`): the fire still to come was left out as past, and the next five listed four.
 * With `max_runs`, the 24-hour and 7-day windows drew fires past the last run.
 * @param {any} sch
 * @param {string[]} times occurrences, in order
 * @param {number} now
 */
function fromNow(sch, times, now) {
  const first = sch.next_fire_times?.[0];
  const due = sch.next_fire_at ?? null;
  let list = times;
  if (first !== undefined && due !== null && due !== first) {
    const firstMs = Date.parse(first);
    list = [due, ...times.filter((t) => Date.parse(t) > firstMs)].sort((a, b) => Date.parse(a) - Date.parse(b));
  }
  list = list.filter((t) => Date.parse(t) >= now);
  return typeof sch.remaining_runs === "number" ? list.slice(0, sch.remaining_runs) : list;
}

/**
 * The occurrence a listed fire stands for, when it is not the fire's own time (jittered or retried).
 * @param {any} sch
 * @param {string} t
 */
function occurrenceOf(sch, t) {
  const first = sch.next_fire_times?.[0];
  return t === sch.next_fire_at && first !== undefined && first !== t ? first : null;
}

/** The most fires the list under a window's strip has rows for: a per-second schedule's day has 50. */
export const LIST_ROWS = 10;

/**
 * The strip of one window, with a line under it when the fires it has do not fill the window, and
 * the list of the fires it draws.
 * @param {any} sch
 * @param {string[]} times the fires from the next one on, at most WINDOW_FIRES
 * @param {string} win
 * @param {number} now
 * @param {boolean} complete whether `times` are all the fires there are up to the window's end (or
 *   the schedule's), so that an empty stretch means no fire
 */
function windowStrip(sch, times, win, now, complete) {
  const strip = upcomingStrip(times, win, now, complete);
  const shown = Number(strip.dataset.shownUntil);
  const capped =
    complete || Number.isNaN(shown)
      ? null
      : h("p", {
          class: "muted small window-capped",
          text: `The first ${times.length} fires are shown, up to ${times[times.length - 1]}: the window holds more, so it is drawn only that far.`,
        });
  return [strip, capped, windowList(sch, times, win, now, complete)].filter((el) => el !== null);
}

/**
 * The list under a strip: its fires, and a caption that says which they are. In "The next 5" the
 * five; in a window the fires inside it, the first LIST_ROWS of them; a window without a fire lists
 * the next one after it, and says so, rather than stand empty.
 * @param {any} sch
 * @param {string[]} times as the strip has them
 * @param {string} win
 * @param {number} now
 * @param {boolean} complete
 */
function windowList(sch, times, win, now, complete) {
  if (times.length === 0) return null;
  const w = WINDOWS[win];
  const fires = (/** @type {number} */ n) => `${n} fire${n === 1 ? "" : "s"}`;
  if (w === undefined || w.ms === null)
    return fireList(sch, times, now, times.length === 1 ? "The next fire" : `The next ${fires(times.length)}`);
  const end = now + w.ms;
  const inside = times.filter((t) => Date.parse(t) <= end);
  const within = `in the next ${w.label}`;
  if (inside.length === 0) return fireList(sch, times.slice(0, 1), now, `No fire ${within}; the next one:`);
  const rows = inside.slice(0, LIST_ROWS);
  // The fires read stop short of the window's end (the preview's cap): the count is of those drawn.
  const known = complete || inside.length < times.length;
  const whole = known ? `${fires(inside.length)} ${within}` : `${fires(inside.length)} drawn above`;
  const text = rows.length < inside.length ? `The first ${rows.length} of the ${whole}` : whole;
  return fireList(sch, rows, now, text);
}

/**
 * @param {any} sch
 * @param {{window: string | null, fires?: {key: string, times: string[] | null}}} state
 * @param {() => void} rerender
 */
export function upcomingSection(sch, state, rerender) {
  const now = Date.now();
  const times = fromNow(sch, sch.next_fire_times, now);
  state.window ??= defaultWindow(times, now);
  const win = state.window ?? "day";
  const buttons = h(
    "div",
    { class: "segmented", role: "group", "aria-label": "Time window" },
    Object.entries(WINDOWS).map(([key, w]) =>
      h("button", {
        type: "button",
        class: "button small",
        "aria-pressed": String(state.window === key),
        dataset: { window: key },
        onclick: () => {
          state.window = key;
          rerender();
        },
        text: w.label,
      }),
    ),
  );
  let note = null;
  if (sch.state === "ended") note = "The schedule has ended: no more fires.";
  else if (sch.paused) note = "Paused: these are the fires it would make if resumed now.";
  else if (typeof sch.remaining_runs === "number")
    note = `max_runs: ${sch.remaining_runs} run${sch.remaining_runs === 1 ? "" : "s"} left, then it ends.`;
  const strip = h("div", { class: "upcoming-strip" });
  // Some or all of the fires the page knows may have passed while it stayed open (a short interval
  // between two reads of the schedule): the strip is drawn from the fires read from now on, not
  // from what is left of the five (it drew two of "the next 5", or nothing).
  const stale = times.length < sch.next_fire_times.length && sch.state !== "ended";
  const nextFive = WINDOWS[win]?.ms === null;
  /** @param {string[]} got */
  const draw = (got) => {
    const upcoming = fromNow(sch, got, now);
    if (nextFive) return windowStrip(sch, upcoming.slice(0, sch.next_fire_times.length), win, now, true);
    // All there are when the preview stopped short of its limit, or the runs left end first.
    const lastRun = typeof sch.remaining_runs === "number" && sch.remaining_runs < got.length;
    // The pending jittered fire comes on top of the preview's 50: "The first 51 fires" said a
    // window capped at 50. Cut to the 50 the note speaks of.
    return windowStrip(sch, upcoming.slice(0, WINDOW_FIRES), win, now, got.length < WINDOW_FIRES || lastRun);
  };
  if (times.length > 0 && nextFive && !stale) strip.replaceChildren(...windowStrip(sch, times, win, now, true));
  else if (times.length > 0 || stale) {
    // Read once per fire (the revision moves with each), not at every refresh.
    const key = `${sch.schedule_id}|${sch.revision}|${times[0] ?? sch.next_fire_times.at(-1)}`;
    const fires = state.fires?.key === key ? state.fires.times : null;
    // Cut at the drawing, not at the reading: the count says whether the preview stopped short.
    if (fires != null) strip.replaceChildren(...draw(fires));
    else {
      strip.replaceChildren(h("p", { class: "muted small", text: "Reading the fires of this window…" }));
      windowFires(sch, now).then(
        (got) => {
          state.fires = { key, times: got };
          if (strip.isConnected) strip.replaceChildren(...draw(got));
        },
        () => {
          // Without the server, the five fires known: drawn only as far as they go, and said so.
          if (strip.isConnected) strip.replaceChildren(...windowStrip(sch, times, win, now, false));
        },
      );
    }
  }
  return h(
    "section",
    { class: "card", "aria-labelledby": "upcoming-heading" },
    // An ended schedule has no fire to show in any window: the buttons would switch nothing.
    h(
      "div",
      { class: "card-head" },
      h("h2", { id: "upcoming-heading", text: "Upcoming fires" }),
      sch.state === "ended" ? null : buttons,
    ),
    note ? h("p", { class: "muted upcoming-note", text: note }) : null,
    // The strip and the list of its fires, drawn together (an ended schedule has neither: the
    // table was its headers alone).
    strip,
  );
}

/**
 * Fires, each in UTC, in the schedule's zone and in the viewer's, under headings that name the
 * zones (the three columns had no headings, so which time was which had to be guessed).
 * @param {any} sch
 * @param {string[]} times
 * @param {number} now
 * @param {string} caption which fires these are
 */
function fireList(sch, times, now, caption) {
  const zone = sch.timezone ?? null;
  const yours = `Yours (${viewerZone()})`;
  const heads = ["UTC", ...(zone ? [`Schedule (${zone})`] : []), yours, "From now"];
  return h(
    "table",
    { class: "fire-list responsive" },
    h("caption", { text: caption }),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        heads.map((c) => h("th", { scope: "col", text: c })),
      ),
    ),
    h(
      "tbody",
      {},
      times.map((/** @type {string} */ t) => {
        const occurrence = occurrenceOf(sch, t);
        return h(
          "tr",
          {},
          h(
            "td",
            { "data-label": "UTC" },
            h("time", { datetime: t, class: "mono", text: t }),
            occurrence === null ? null : h("div", { class: "muted small" }, instantNodes(`occurrence ${occurrence}`)),
          ),
          zone ? h("td", { class: "zone", "data-label": `Schedule (${zone})`, text: zoneText(t, zone) }) : null,
          h("td", { class: "local", "data-label": yours, text: localText(t) }),
          h("td", { class: "muted", "data-label": "From now" }, relativeEl(t, { due: true, now })),
        );
      }),
    ),
  );
}
