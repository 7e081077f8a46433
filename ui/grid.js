// @ts-check
/**
 * The per-occurrence grid (Airflow's grid, for one schedule): one row per UTC day, newest first,
 * one square per occurrence in time order (its latest ledger row; a missed range is one square
 * with its count), coloured by what became of it: the execution's status
 * for started ones (failed red), the reason for skipped ones. Each square links to its execution
 * and has a title and an accessible name.
 */
import { occurrencePage } from "./api.js";
import { h } from "./dom.js";

/** The days the grid shows: the newest that hold an occurrence. */
const DAYS = 14;
/** Ledger pages the grid reads at most, past the first (500 rows each). */
const MORE_PAGES = 4;

/**
 * What the grid draws from: the ledger rows read and what they cover. `whole`: every row the
 * ledger holds was read; `trimmed`: but the ledger no longer holds the schedule's whole history.
 * @typedef {{rows: any[], pages: any[], whole: boolean, trimmed: boolean, covered: boolean, since: string | null}} GridLedger
 */

/**
 * The ledger rows that hold the newest 14 days with occurrences. The ledger is read newest
 * *recorded* first, so a backfill of old ranges fills the first page with old occurrences and
 * today's fires fall off it: the grid showed October days and no today. A row is recorded at or
 * after its occurrence, so once the oldest row read was recorded before the 14th day's start,
 * every row of those days has been read; until then (or `MORE_PAGES` more pages) it reads on.
 * @param {string} id
 * @param {any} first the first page (`occurrencePage`), already read for the rest of the page
 * @param {{fired: number, skipped: number}} [counts] the schedule's counters, to tell a trimmed ledger
 * @returns {Promise<GridLedger>}
 */
export async function gridLedger(id, first, counts) {
  const pages = [first];
  let rows = first.occurrences;
  let cursor = first.next_cursor ?? null;
  while (cursor !== null && pages.length <= MORE_PAGES && !covers(rows)) {
    const page = await occurrencePage(id, first.occurrences.length, cursor);
    pages.push(page);
    rows = [...rows, ...page.occurrences];
    cursor = page.next_cursor ?? null;
  }
  const whole = cursor === null;
  const trimmed = whole && counts !== undefined && counts.fired + counts.skipped > decisionsIn(rows);
  return { rows, pages, whole, trimmed, covered: whole || covers(rows), since: oldestRecorded(rows) };
}

/**
 * How many of the schedule's decisions the rows account for, as its counters count them
 * (docs/scheduling.md § Every occurrence accounted for: `fired` counts `started` rows, `skipped`
 * every other account, a missed range by its count; `buffered` is settled by a later row). The
 * ledger keeps each schedule's newest rows only (1,000 by default, `--ledger-retention`), so
 * counters past what the rows account for mean older rows are gone.
 * @param {any[]} rows
 */
function decisionsIn(rows) {
  let n = 0;
  for (const row of rows) {
    if (row.kind === "buffered") continue;
    n += row.range_from !== undefined && typeof row.count === "number" ? row.count : 1;
  }
  return n;
}

/** @param {any[]} rows */
function oldestRecorded(rows) {
  /** @type {string | null} */
  let oldest = null;
  for (const row of rows) if (oldest === null || row.recorded_at < oldest) oldest = row.recorded_at;
  return oldest;
}

/**
 * Whether `rows` (the newest recorded) hold every row of their newest 14 occurrence days.
 * @param {any[]} rows
 */
function covers(rows) {
  const days = occurrenceDays(rows);
  const since = oldestRecorded(rows);
  if (days.length < DAYS || since === null) return false;
  return Date.parse(since) < Date.parse(`${days[DAYS - 1]}T00:00:00Z`);
}

/**
 * @param {any} row a ledger row
 * @param {Map<string, string>} statuses execution id → status
 */
export function cellOf(row, statuses) {
  if (row.kind === "started") {
    const status = row.execution_id ? statuses.get(row.execution_id) : undefined;
    // A started row whose execution is no longer stored (retention deleted it): drawn as the
    // running blue before, a days-old occurrence looked as if it ran still (a tester).
    if (status === undefined) return { cls: "cell status-deleted", label: "execution deleted (retention)" };
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
    // Not the range itself, nor another missed row: a single missed occurrence carries its own
    // `occurrence`, counted itself as run later and was dropped (the grid said "No occurrences yet").
    const ranLater = all.filter(
      (o) =>
        o !== row &&
        o.range_from === undefined &&
        o.occurrence != null &&
        Date.parse(o.occurrence) >= from &&
        Date.parse(o.occurrence) <= to,
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
 * day (UTC)", so a schedule with months of history looked as if it had two weeks. When the rows
 * read may lack some of those days' occurrences, it says which rows it draws from.
 * @param {GridLedger} ledger
 */
export function occurrenceGridHeading({ rows, whole, trimmed, covered, since }) {
  const n = occurrenceDays(rows).length;
  const base = "By day (UTC), one square per occurrence";
  // Read to its end, the ledger had lost its older rows (after a big backfill it keeps the newest
  // 1,000): "all 3 days with occurrences" claimed the whole history (a tester).
  if (covered && trimmed) {
    const shown = n <= DAYS ? `the ${daysText(n)}` : `the newest ${DAYS} of the ${n} days`;
    return (
      `${base}: ${shown} with occurrences still in the ledger ` +
      "(it keeps only each schedule's newest decisions, 1,000 by default; older ones are gone)"
    );
  }
  if (!covered) {
    const shown = n <= DAYS ? daysText(n) : `the newest ${DAYS} of their ${n} days`;
    return (
      `${base}, from the ${rows.length === 1 ? "one" : rows.length.toLocaleString("en")} most recently recorded ` +
      `ledger ${rows.length === 1 ? "row" : "rows"} ` +
      `(recorded since ${since}): ${shown} with occurrences. Occurrences recorded before then ` +
      "are not read, so a day may be missing or incomplete."
    );
  }
  if (n <= DAYS && whole) return `${base}: ${n === 1 ? "the one day" : `all ${n} days`} with occurrences`;
  if (n <= DAYS) return `${base}: the newest ${daysText(n)} with occurrences (older ones are not shown)`;
  const older = whole ? `${n - DAYS} older ${n - DAYS === 1 ? "day is" : "days are"}` : "older days are";
  return `${base}: the newest ${DAYS} days with occurrences (${older} not shown)`;
}

/** @param {number} n */
function daysText(n) {
  return n === 1 ? "1 day" : `${n} days`;
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
              // A deleted execution has no page to link to ("does not exist").
              return row.execution_id && statuses.has(row.execution_id)
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
