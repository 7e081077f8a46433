// @ts-check
/**
 * The per-occurrence grid (Airflow's grid, for one schedule): one row per UTC day, newest first,
 * one square per occurrence in time order (its latest ledger row; a missed range is one square
 * with its count), coloured by what became of it: the execution's status
 * for started ones (failed red), the reason for skipped ones. Each square links to its execution
 * and has a title and an accessible name.
 */
import { h } from "./dom.js";

/** The days the grid shows: the newest that hold an occurrence. */
const DAYS = 14;

/**
 * @param {any} row a ledger row
 * @param {Map<string, string>} statuses execution id → status
 */
function cellOf(row, statuses) {
  if (row.kind === "started") {
    const status = (row.execution_id && statuses.get(row.execution_id)) || "STARTED";
    if (status === "TIMED_OUT") return { cls: "cell status-failed timed-out", label: "timed out" };
    return { cls: `cell status-${status.toLowerCase()}`, label: status.toLowerCase() };
  }
  if (row.kind === "skipped")
    return { cls: `cell skipped reason-${row.reason ?? "other"}`, label: `skipped (${row.reason})` };
  if (row.kind === "dead_letter") return { cls: "cell dead-letter", label: "dead letter" };
  return { cls: "cell buffered", label: row.kind };
}

/**
 * One row per occurrence, its latest (the ledger's order): an occurrence buffered and then started
 * has a row for each and got two squares, one of them "buffered" in the running blue. What it was
 * before is kept as `earlier` for its title.
 * @param {any[]} rows
 */
function latestPerOccurrence(rows) {
  const order = (/** @type {any} */ row) => (typeof row.id === "number" ? row.id : Date.parse(row.recorded_at));
  /** @type {Map<string, any>} */
  const latest = new Map();
  /** @type {Map<string, string[]>} */
  const earlier = new Map();
  for (const row of [...rows].sort((a, b) => order(a) - order(b))) {
    const key = row.occurrence ?? `${row.range_from}/${row.range_to}/${row.id}`;
    const had = latest.get(key);
    if (had !== undefined) earlier.set(key, [...(earlier.get(key) ?? []), had.kind]);
    latest.set(key, row);
  }
  const all = [...latest].map(([key, row]) => ({ ...row, earlier: earlier.get(key) ?? [] }));
  return all.flatMap((row) => {
    if (row.range_from === undefined || typeof row.count !== "number") return [row];
    // A missed range whose occurrences a backfill (or a catch-up) ran later: each of those has
    // its own square, so the range keeps only the rest (all 17 were drawn as missed beside the 17
    // green squares of the backfill that ran them).
    const from = Date.parse(row.range_from);
    const to = Date.parse(row.range_to);
    const ranLater = all.filter(
      (o) => o.occurrence != null && Date.parse(o.occurrence) >= from && Date.parse(o.occurrence) <= to,
    ).length;
    if (ranLater === 0) return [row];
    const left = row.count - ranLater;
    return left > 0 ? [{ ...row, count: left, ranLater, missedFirst: row.count }] : [];
  });
}

/**
 * Where a row sits in time. A manual trigger's row has no occurrence (`occurrence: null`), so it
 * is placed at the time it was recorded: it sorted first in its day, titled "undefined … undefined".
 * @param {any} row
 * @returns {string}
 */
function timeOf(row) {
  return row.occurrence ?? row.range_from ?? row.recorded_at;
}

/** @param {any} row */
function isManual(row) {
  return row.occurrence === null && row.range_from === undefined;
}

/**
 * @param {any[]} rows the ledger, any order
 * @param {Map<string, string>} statuses
 */
export function occurrenceGrid(rows, statuses) {
  const days = occurrenceDays(rows).slice(0, DAYS);
  if (days.length === 0) return h("p", { class: "empty", text: "No occurrences yet." });
  return dayTable(days, rows, statuses);
}

/**
 * The grid's heading: it shows the newest 14 days that hold an occurrence, and said only "By
 * day (UTC)", so a schedule with months of history looked as if it had two weeks.
 * @param {any[]} rows the ledger's newest rows, any order
 * @param {boolean} whole whether `rows` is the whole ledger (else older days may exist unread)
 */
export function occurrenceGridHeading(rows, whole) {
  const n = occurrenceDays(rows).length;
  const base = "By day (UTC), one square per occurrence";
  if (n <= DAYS && whole) return `${base}: ${n === 1 ? "the one day" : `all ${n} days`} with occurrences`;
  if (n <= DAYS) return `${base}: the newest ${n} days with occurrences (older ones are not shown)`;
  const older = whole ? `${n - DAYS} older ${n - DAYS === 1 ? "day is" : "days are"}` : "older days are";
  return `${base}: the newest ${DAYS} days with occurrences (${older} not shown)`;
}

/**
 * The UTC days that hold an occurrence, newest first.
 * @param {any[]} rows
 */
function occurrenceDays(rows) {
  const days = new Set(latestPerOccurrence(rows).map((row) => dayOf(row)));
  return [...days].sort().reverse();
}

/** @param {any} row */
function dayOf(row) {
  return (row.occurrence ?? row.range_to ?? row.recorded_at).slice(0, 10);
}

/**
 * @param {string[]} days newest first
 * @param {any[]} rows
 * @param {Map<string, string>} statuses
 */
function dayTable(days, rows, statuses) {
  /** @type {Map<string, any[]>} */
  const byDay = new Map();
  for (const row of latestPerOccurrence(rows)) {
    const day = dayOf(row);
    const list = byDay.get(day) ?? [];
    list.push(row);
    byDay.set(day, list);
  }
  return h(
    "table",
    { class: "occurrence-grid", "aria-label": "Occurrences by day (UTC)" },
    h(
      "tbody",
      {},
      days.map((day) => {
        const list = (byDay.get(day) ?? []).sort((a, b) => Date.parse(timeOf(a)) - Date.parse(timeOf(b)));
        return h(
          "tr",
          { dataset: { day } },
          h("th", { scope: "row", class: "mono small", text: day }),
          h(
            "td",
            {},
            list.map((row) => {
              const { cls, label } = cellOf(row, statuses);
              const before = row.earlier.length > 0 ? ` (${row.earlier.join(", then ")} first)` : "";
              if (row.count > 1 || row.ranLater !== undefined) {
                // A missed range is one row, so one square: it says how many it stands for.
                const later =
                  row.ranLater === undefined ? "" : ` (${row.ranLater} of the ${row.missedFirst} ran later)`;
                const name = `${row.count} missed, ${row.range_from} … ${row.range_to}${later}`;
                return h("span", {
                  class: `${cls} range`,
                  title: name,
                  role: "img",
                  "aria-label": name,
                  text: String(row.count),
                });
              }
              const when = isManual(row)
                ? `manual trigger at ${row.recorded_at}`
                : (row.occurrence ?? `${row.range_from} … ${row.range_to}`);
              const name = `${when}: ${label}${before}${row.error ? `: ${row.error}` : ""}`;
              return row.execution_id
                ? h("a", {
                    class: cls,
                    href: `#/executions/${encodeURIComponent(row.execution_id)}`,
                    title: name,
                    "aria-label": name,
                  })
                : h("span", { class: cls, title: name, role: "img", "aria-label": name });
            }),
          ),
        );
      }),
    ),
  );
}
