// @ts-check
/**
 * The two pictures of the detail view, as plain SVG: the upcoming fires on a time strip, and the
 * ledger over time. Each mark carries a <title> (hover text) and data-kind / data-reason
 * attributes; the pictures compute no occurrences themselves, they draw what the API returned.
 */
import { h, s, title } from "./dom.js";
import { localText, tickLabel } from "./format.js";

const WIDTH = 800;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEPS = [
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];
/**
 * Beyond a week, ticks on the first of a month (UTC), every 1, 3 or 6 months or 1, 2, 5, 10 or 100
 * years: steps of 30 and 365 days, counted from 1970, put a year's two ticks on 18 December each.
 */
const MONTH_STEPS = [1, 3, 6, 12, 24, 60, 120, 1200];
const MONTH = 30.44 * DAY;

/** A linear time scale from [lo, hi] to [left, right] pixels. */
function scale(lo, hi, left, right) {
  const span = Math.max(hi - lo, 1);
  return (t) => left + ((t - lo) / span) * (right - left);
}

/**
 * About how wide a label is drawn, in the chart's units: the digits of system-ui and DejaVu Sans
 * are at most 0.65 em wide. The charts scale with their viewBox, so this holds at any width.
 */
const labelWidth = (text, fontSize) => text.length * fontSize * 0.65;
const LABEL_GAP = 12;

/**
 * Axis ticks at round UTC instants: the smallest step that gives at most `max` ticks whose labels
 * fit side by side (the 7-day strip printed its day labels over each other).
 */
function ticks(lo, hi, x, fontSize, max = 8) {
  const span = hi - lo;
  const fits = (st) =>
    span / st <= max && x(lo + st) - x(lo) >= labelWidth(tickLabel(0, span, st), fontSize) + LABEL_GAP;
  const step = STEPS.find(fits);
  const out = [];
  if (step !== undefined) {
    for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) out.push(t);
    return { step, times: out };
  }
  const months = MONTH_STEPS.find((m) => fits(m * MONTH)) ?? MONTH_STEPS[MONTH_STEPS.length - 1];
  const first = new Date(lo);
  let index = first.getUTCFullYear() * 12 + first.getUTCMonth();
  index = Math.ceil(index / months) * months;
  for (let t = Date.UTC(Math.floor(index / 12), index % 12); t <= hi; ) {
    if (t >= lo) out.push(t);
    index += months;
    t = Date.UTC(Math.floor(index / 12), index % 12);
  }
  return { step: months * MONTH, times: out };
}

/**
 * How a label centred on `at` is anchored so that it stays inside [0, width]: a tick at the right
 * edge was cut ("03:16:3").
 */
function anchorInside(at, text, fontSize, width) {
  const half = labelWidth(text, fontSize) / 2;
  if (at + half > width) return "end";
  if (at - half < 0) return "start";
  return "middle";
}

/** The axis from lo to hi; ticks only up to `until` (the ledger's padding past now gets none). */
function axis(lo, hi, x, y, top, fontSize, width, until = hi) {
  const g = s("g", { class: "axis", "aria-hidden": "true" });
  g.append(s("line", { x1: x(lo), x2: x(hi), y1: y, y2: y, class: "axis-line" }));
  const { step, times } = ticks(lo, hi, x, fontSize);
  let lastRight = Number.NEGATIVE_INFINITY;
  for (const t of times) {
    if (t > until) continue;
    const text = tickLabel(t, hi - lo, step);
    const w = labelWidth(text, fontSize);
    const anchor = anchorInside(x(t), text, fontSize, width);
    const left = anchor === "end" ? x(t) - w : anchor === "start" ? x(t) : x(t) - w / 2;
    g.append(s("line", { x1: x(t), x2: x(t), y1: top, y2: y + 4, class: "grid-line" }));
    // Moved inside the edge, a label may reach its neighbour: then the tick goes unlabelled.
    if (left < lastRight + LABEL_GAP / 2) continue;
    lastRight = left + w;
    g.append(s("text", { x: x(t), y: y + 18, class: "tick-label", "text-anchor": anchor, text }));
  }
  return g;
}

function nowMarker(now, lo, hi, x, top, bottom, width) {
  if (now < lo || now > hi) return null;
  // Left of its line when the right edge is near: it read "no".
  const before = x(now) + 4 + labelWidth("now", 11) > width;
  return s(
    "g",
    { class: "now", "aria-hidden": "true" },
    s("line", { x1: x(now), x2: x(now), y1: top, y2: bottom, class: "now-line" }),
    s("text", {
      x: before ? x(now) - 4 : x(now) + 4,
      y: top + 10,
      class: "now-label",
      "text-anchor": before ? "end" : "start",
      text: "now",
    }),
  );
}

/** The window choices of the upcoming strip. */
export const WINDOWS = {
  fit: { label: "The next 5", ms: null },
  day: { label: "24 h", ms: DAY },
  week: { label: "7 days", ms: 7 * DAY },
};

/**
 * The window a schedule's strip opens with: the smallest that shows its points apart and holds all
 * of the next five, or the five themselves when a week does not hold them (a weekly cron opened on
 * "7 days" with one fire, and the five a click away).
 */
export function defaultWindow(times, now) {
  if (times.length === 0) return "day";
  const first = Date.parse(times[0]);
  const last = Date.parse(times[times.length - 1]);
  if (last - first < HOUR) return "fit";
  const span = last - Math.min(now, first);
  if (span <= DAY) return "day";
  return span <= 7 * DAY ? "week" : "fit";
}

/**
 * The upcoming fires on a strip covering `windowKey` from now; the caller drops fires before now
 * (upcoming.js), and a window strip never starts before it. When `complete` is
 * false, `times` may stop before the window's end (a cap): the strip then ends just past the last
 * of them, rather than draw a stretch without marks as if nothing fired there, and records where it
 * ends in `data-shown-until`.
 */
export function upcomingStrip(times, windowKey, now = Date.now(), complete = true) {
  const WIDTH = 560;
  const points = times.map((t) => Date.parse(t));
  const height = 96;
  const y = 48;
  const left = 20;
  const right = WIDTH - 20;
  let lo;
  let hi;
  const windowMs = WINDOWS[windowKey]?.ms ?? null;
  if (windowMs === null) {
    const first = points[0] ?? now;
    const last = points[points.length - 1] ?? now + MINUTE;
    const pad = Math.max((last - first) * 0.08, SECOND);
    lo = first - pad;
    hi = last + pad;
  } else {
    // From now: a first fire before the browser's now (a 2 s interval between refreshes) started
    // the strip hours earlier, so "7 days" drew mostly the past with every fire crushed at its edge.
    lo = now;
    hi = lo + windowMs;
    const last = points[points.length - 1];
    if (!complete && last !== undefined && last < hi) hi = last + Math.max((last - lo) * 0.04, SECOND);
  }
  const x = scale(lo, hi, left, right);
  const inside = points.filter((p) => p >= lo && p <= hi);
  const later = points.filter((p) => p > hi).length;
  const desc = `${inside.length} of the ${points.length} fires read between ${new Date(lo).toISOString()} and ${new Date(hi).toISOString()}`;
  const svg = s(
    "svg",
    {
      viewBox: `0 0 ${WIDTH} ${height}`,
      class: "chart upcoming-chart",
      role: "img",
      "aria-labelledby": "upcoming-title upcoming-desc",
      ...(windowMs !== null && hi < lo + windowMs ? { "data-shown-until": String(Math.round(hi)) } : {}),
    },
    s("title", { id: "upcoming-title", text: "Upcoming fires" }),
    s("desc", { id: "upcoming-desc", text: desc }),
    s("rect", { x: left, y: y - 14, width: right - left, height: 28, rx: 6, class: "strip-band" }),
    axis(lo, hi, x, y + 14, y - 14, 12, WIDTH),
    nowMarker(now, lo, hi, x, 6, height - 20, WIDTH),
  );
  // Marks shrink where fires crowd (50 a minute apart) so that each stays apart.
  const gaps = inside.slice(1).map((p, i) => x(p) - x(inside[i] ?? p));
  const r = Math.max(3, Math.min(7, (Math.min(Infinity, ...gaps) - 1) / 2));
  // Numbered while the numbers stay apart; many fires keep theirs in the title. Fires closer than
  // their labels (a retry fire 18 ms before the next occurrence) share one label, "1–2": drawn
  // each at its own mark, the two numbers were printed over each other.
  const labels = inside.length <= 12 ? fireLabels(points, lo, hi, x) : new Map();
  points.forEach((p, i) => {
    if (p < lo || p > hi) return;
    const iso = times[i];
    const label = labels.get(i);
    svg.append(
      s(
        "g",
        { class: "mark fire", dataset: { mark: "fire" } },
        s("circle", { cx: x(p), cy: y, r }),
        label
          ? s("text", { x: label.x, y: y - 18, "text-anchor": "middle", class: "mark-label", text: label.text })
          : null,
        title(`fire ${i + 1}: ${iso}\nlocal: ${localText(iso)}`),
      ),
    );
  });
  if (later > 0) {
    // A window's fires come from the preview, which stops at its count, not at the last fire.
    const text = windowMs === null ? `+${later} later →` : "more later →";
    svg.append(s("text", { x: right, y: 14, "text-anchor": "end", class: "later-label", text }));
  }
  return svg;
}

/**
 * The fire numbers of a strip, keyed by the index of the fire that carries each label: fires whose
 * labels would touch are one group, labelled "3–4" at the group's middle.
 * @param {number[]} points every fire, in time order
 * @param {number} lo
 * @param {number} hi
 * @param {(t: number) => number} x
 * @returns {Map<number, {x: number, text: string}>}
 */
function fireLabels(points, lo, hi, x) {
  /** @type {{first: number, last: number, from: number, to: number}[]} */
  const groups = [];
  const text = (/** @type {{first: number, last: number}} */ g) =>
    g.first === g.last ? String(g.first + 1) : `${g.first + 1}–${g.last + 1}`;
  points.forEach((p, i) => {
    if (p < lo || p > hi) return;
    const at = x(p);
    const prev = groups[groups.length - 1];
    if (prev !== undefined) {
      const merged = { first: prev.first, last: i, from: prev.from, to: at };
      const own = String(i + 1);
      // Apart when the previous label's right edge and this one's left edge leave a 3 px gap.
      const prevRight = (prev.from + prev.to) / 2 + labelWidth(text(prev), 12) / 2;
      if (at - labelWidth(own, 12) / 2 - prevRight < 3) {
        groups[groups.length - 1] = merged;
        return;
      }
    }
    groups.push({ first: i, last: i, from: at, to: at });
  });
  return new Map(groups.map((g) => [g.first, { x: (g.from + g.to) / 2, text: text(g) }]));
}

/**
 * The legend key of a started occurrence, from the status its ledger row carries (docs/outcomes.md),
 * coloured as the day grid colours it: every run that did not fail was drawn green, a CANCELLED or
 * RUNNING one too. "started" alone is a row without a status.
 * @param {string | undefined} status
 */
function startedKey(status) {
  const key = String(status ?? "").toLowerCase();
  return STARTED_KEYS.includes(key) ? key : "started";
}
const STARTED_KEYS = ["completed", "failed", "timed_out", "cancelled", "running", "compensating"];

/**
 * How a ledger row is drawn: lane, colour class, label.
 * @param {any} row
 * @param {string | undefined} [status] a started row's execution status
 */
function kindOf(row, status) {
  if (row.kind === "skipped") return { lane: 1, cls: `skipped reason-${row.reason ?? "other"}` };
  if (row.kind === "buffered") return { lane: 2, cls: "buffered" };
  if (row.kind === "dead_letter") return { lane: 3, cls: "dead-letter" };
  const key = startedKey(status);
  if (key === "timed_out") return { lane: 0, cls: "started status-failed failed timed-out" };
  return { lane: 0, cls: key === "started" ? "started" : `started status-${key}${key === "failed" ? " failed" : ""}` };
}

const LANES = ["started", "skipped", "buffered", "dead letter"];

/** The instants a row covers: [from, to] (equal for a single occurrence). */
function spanOf(row) {
  const from = Date.parse(row.range_from ?? row.occurrence ?? row.recorded_at);
  const to = Date.parse(row.range_to ?? row.occurrence ?? row.recorded_at);
  return [from, to];
}

/** A mark's shape, shared by the picture and its legend. */
function shape(kind, reason, cx, cy) {
  if (kind === "started") return s("circle", { cx, cy, r: 5 });
  if (kind === "buffered") return s("circle", { cx, cy, r: 5, class: "hollow" });
  if (kind === "dead_letter") {
    return s("path", {
      d: `M${cx - 5} ${cy - 5}L${cx + 5} ${cy + 5}M${cx + 5} ${cy - 5}L${cx - 5} ${cy + 5}`,
      class: "cross",
    });
  }
  if (reason === "buffer_full") return s("rect", { x: cx - 5, y: cy - 5, width: 10, height: 10 });
  return s("path", { d: `M${cx} ${cy - 6}L${cx + 6} ${cy}L${cx} ${cy + 6}L${cx - 6} ${cy}Z` });
}

function rowTitle(row) {
  const lines = [];
  if (row.kind === "skipped" && row.reason === "missed" && row.range_from !== undefined) {
    lines.push(`skipped (missed): ${row.count ?? 1} occurrence(s) from ${row.range_from} to ${row.range_to}`);
  } else {
    const what = row.kind === "skipped" ? `skipped (${row.reason})` : row.kind.replace("_", " ");
    // A manual trigger has no occurrence: its row is the trigger's, at the time it was recorded.
    const at = row.occurrence ?? row.recorded_at;
    lines.push(row.occurrence ? `${what}: ${at}` : `${what} (manual trigger): ${at}`);
    lines.push(`local: ${localText(at)}`);
  }
  const status = row.status === "FAILED" && row.error_type === "Timeout" ? "TIMED OUT" : row.status;
  if (row.execution_id) lines.push(`execution ${row.execution_id}${status ? ` ${status}` : ""}`);
  if (row.error) lines.push(`error: ${row.error}`);
  lines.push(`recorded ${row.recorded_at}`);
  return lines.join("\n");
}

/** The ledger rows (any order) on a time axis, one lane per kind. */
export function ledgerTimeline(rows, now = Date.now(), statuses = new Map()) {
  const height = 176;
  const left = 104;
  const right = WIDTH - 16;
  const laneY = (i) => 26 + i * 32;
  const axisY = laneY(LANES.length - 1) + 22;
  const spans = rows.map(spanOf);
  let lo = Math.min(...spans.map(([f]) => f));
  let hi = Math.max(...spans.map(([, t]) => t));
  if (!Number.isFinite(lo)) {
    lo = now - HOUR;
    hi = now;
  }
  // Ticks stop at the later of the newest row and now: the padding after them is no time to label
  // (a ledger of a year and a half ticked a month past now).
  const lastTick = Math.max(hi, now);
  const pad = Math.max((hi - lo) * 0.04, 5 * SECOND);
  lo -= pad;
  hi += pad;
  const x = scale(lo, hi, left, right);
  const counts = summarize(rows, statuses);
  const svg = s(
    "svg",
    {
      viewBox: `0 0 ${WIDTH} ${height}`,
      class: "chart ledger-chart",
      role: "img",
      "aria-labelledby": "ledger-title ledger-desc",
    },
    s("title", { id: "ledger-title", text: "The ledger over time" }),
    s("desc", { id: "ledger-desc", text: summaryText(counts) }),
    axis(lo, hi, x, axisY, 10, 11, WIDTH, lastTick),
  );
  LANES.forEach((name, i) => {
    svg.append(
      s("line", { x1: left, x2: right, y1: laneY(i), y2: laneY(i), class: "lane-line", "aria-hidden": "true" }),
      s("text", { x: left - 10, y: laneY(i) + 4, "text-anchor": "end", class: "lane-label", text: name }),
    );
  });
  // Oldest first, so that the newest mark is on top where they overlap.
  const ordered = rows.map((row, i) => ({ row, span: spans[i] })).sort((a, b) => a.span[0] - b.span[0]);
  for (const { row, span } of ordered) {
    // A started occurrence is coloured by its execution's status, as its square in the day grid.
    const status = row.execution_id ? statuses.get(row.execution_id) : undefined;
    const { lane, cls } = kindOf(row, status);
    const cy = laneY(lane);
    const data = { kind: row.kind, ...(row.reason ? { reason: row.reason } : {}), ...(status ? { status } : {}) };
    const g = s("g", { class: `mark ${cls}`, dataset: data });
    // Missed is a bar, as the legend keys it, a single missed occurrence a short one (it was a
    // grey diamond, which the legend keys nowhere).
    if (row.kind === "skipped" && row.reason === "missed") {
      if (span[1] > span[0]) {
        const x0 = x(span[0]);
        const w = Math.max(x(span[1]) - x0, 4);
        g.append(s("rect", { x: x0, y: cy - 6, width: w, height: 12, rx: 3, class: "range" }));
        const label = { x: x0 + w / 2, y: cy - 10, "text-anchor": "middle", class: "mark-label" };
        g.append(s("text", { ...label, text: `${row.count} missed` }));
      } else g.append(s("rect", { x: x(span[0]) - 9, y: cy - 4, width: 18, height: 8, rx: 2, class: "range" }));
    } else {
      g.append(shape(row.kind, row.reason, x(span[0]), cy));
    }
    g.append(title(rowTitle(status ? { ...row, status } : row)));
    svg.append(g);
  }
  const marker = nowMarker(now, lo, hi, x, 8, axisY, WIDTH);
  if (marker !== null) svg.append(marker);
  return svg;
}

/**
 * Counts per legend entry; a started occurrence counts under its execution's status (it is drawn
 * in that status's colour), "started" only when the row has none.
 */
export function summarize(rows, statuses = new Map()) {
  const c = {
    completed: 0,
    failed: 0,
    timed_out: 0,
    cancelled: 0,
    running: 0,
    compensating: 0,
    started: 0,
    overlap: 0,
    concurrency: 0,
    buffer_full: 0,
    missed: 0,
    buffered: 0,
    dead_letter: 0,
  };
  for (const row of rows) {
    if (row.kind === "skipped") {
      const key = row.reason in c ? row.reason : "overlap";
      c[key] += row.reason === "missed" ? (row.count ?? 1) : 1;
    } else if (row.kind === "started") {
      c[startedKey(row.execution_id ? statuses.get(row.execution_id) : undefined)] += 1;
    } else if (row.kind in c) c[row.kind] += 1;
  }
  return c;
}

/** @type {[string, string, string | undefined, string][]} */
const LEGEND = [
  ["completed", "started", undefined, "started, completed"],
  ["failed", "started", undefined, "started, failed"],
  ["timed_out", "started", undefined, "started, timed out"],
  ["cancelled", "started", undefined, "started, cancelled"],
  ["running", "started", undefined, "started, running"],
  ["compensating", "started", undefined, "started, compensating"],
  ["started", "started", undefined, "started, status unknown"],
  ["overlap", "skipped", "overlap", "skipped: overlap"],
  ["concurrency", "skipped", "concurrency", "skipped: concurrency"],
  ["buffer_full", "skipped", "buffer_full", "skipped: buffer full"],
  ["missed", "skipped", "missed", "skipped: missed (a bar across the range)"],
  ["buffered", "buffered", undefined, "buffered"],
  ["dead_letter", "dead_letter", undefined, "dead letter"],
];

/** Keys shown only when they count something: rarer statuses would crowd the legend. */
const SHOWN_WHEN_ANY = new Set(["timed_out", "cancelled", "running", "compensating", "started"]);

/** @returns {typeof LEGEND} */
function legendKeys(c) {
  return LEGEND.filter(([key]) => !SHOWN_WHEN_ANY.has(key) || c[key] > 0);
}

function summaryText(c) {
  return legendKeys(c)
    .map(([key, , , label]) => `${label.replace(/ \(.*\)$/, "")}: ${c[key]}`)
    .join(", ");
}

/** The legend under the ledger picture, with each category's count. */
export function ledgerLegend(rows, statuses = new Map()) {
  const c = summarize(rows, statuses);
  return h(
    "ul",
    { class: "legend", "aria-label": "Legend" },
    legendKeys(c).map(([key, kind, reason, label]) => {
      // A started key is drawn as the picture's mark of that status.
      const cls = kindOf({ kind, reason }, kind === "started" ? key : undefined).cls;
      return h(
        "li",
        { dataset: { legend: key } },
        s(
          "svg",
          { viewBox: "0 0 16 16", width: 16, height: 16, "aria-hidden": "true", class: `mark ${cls}` },
          key === "missed"
            ? s("rect", { x: 1, y: 5, width: 14, height: 6, rx: 2, class: "range" })
            : shape(kind, reason, 8, 8),
        ),
        ` ${label} `,
        h("span", { class: "count", text: `(${c[key]})` }),
      );
    }),
  );
}
