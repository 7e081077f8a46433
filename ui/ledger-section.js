// @ts-check
/**
 * A schedule's ledger on its page: the decisions over time (a timeline), by day (the occurrence
 * grid) and the newest rows as a table, each row linked to its execution or saying its reason.
 */
import { ledgerLegend, ledgerTimeline } from "./charts.js";
import { h, instantNodes, scrollBox } from "./dom.js";
import { executionLink, timeEl } from "./format.js";
import { occurrenceGrid, occurrenceGridHeading } from "./grid.js";

const LEDGER_ROWS_LISTED = 25;

/** @param {any} row */
function ledgerDetail(row) {
  if (row.execution_id) return executionLink(row.execution_id);
  if (row.kind === "skipped" && row.reason === "missed" && row.range_from) {
    return instantNodes(`${row.count} missed, ${row.range_from} … ${row.range_to}`);
  }
  if (row.error) return h("bdi", { class: "error-text", text: row.error });
  return row.reason ?? "";
}

/**
 * What the rows drawn below are of the schedule's decisions. It said "every decision … (500
 * rows)" of a ledger with thousands, and of one whose older rows retention had removed.
 * @param {any[]} rows the newest recorded ledger rows (the first page)
 * @param {import("./grid.js").GridLedger} grid
 */
function ledgerExtent(rows, grid) {
  const count = `${rows.length.toLocaleString("en")} row${rows.length === 1 ? "" : "s"}`;
  if (grid.pages[0]?.next_cursor) return `The newest ${count} the scheduler recorded for this schedule.`;
  if (grid.trimmed)
    return (
      `The decisions for this schedule still in the ledger (${count}; it keeps only each ` +
      "schedule's newest, 1,000 by default, and older ones are gone)."
    );
  return `Every decision the scheduler recorded for this schedule (${count}).`;
}

/**
 * @param {any[]} rows the newest recorded ledger rows
 * @param {import("./grid.js").GridLedger} grid the rows the day grid draws from (more, when it needs them)
 * @param {Map<string, string>} statuses
 */
export function ledgerSection(rows, grid, statuses) {
  const listed = rows.slice(0, LEDGER_ROWS_LISTED);
  return h(
    "section",
    { class: "card", "aria-labelledby": "ledger-heading" },
    h("h2", { id: "ledger-heading", text: "The ledger over time" }),
    h(
      "p",
      { class: "muted" },
      ledgerExtent(rows, grid),
      h("span", { class: "hover-hint", text: " Hover a mark for its details." }),
    ),
    rows.length === 0
      ? h("p", { class: "empty", text: "Nothing recorded yet: the schedule has not fired." })
      : [
          h(
            "div",
            { class: "chart-scroll", ...scrollBox("Ledger picture") },
            ledgerTimeline(rows, Date.now(), statuses),
          ),
          ledgerLegend(rows, statuses),
        ],
    rows.length === 0
      ? null
      : h(
          "div",
          { class: "grid-wrap" },
          h("h3", { class: "grid-heading", text: occurrenceGridHeading(grid) }),
          occurrenceGrid(grid.rows, statuses),
        ),
    rows.length === 0
      ? null
      : h(
          "details",
          { class: "ledger-rows" },
          h("summary", { text: `The newest ${listed.length} rows` }),
          h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              // One card per row at 390 px, as every other table: it stayed a wide table.
              { class: "ledger-table responsive" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["Occurrence", "Decision", "Detail", "Recorded"].map((c) => h("th", { scope: "col", text: c })),
                ),
              ),
              h(
                "tbody",
                {},
                listed.map((/** @type {any} */ row) =>
                  h(
                    "tr",
                    {},
                    h("td", { "data-label": "Occurrence" }, timeEl(row.occurrence ?? row.range_to)),
                    h(
                      "td",
                      { "data-label": "Decision" },
                      h("span", {
                        class: `badge ledger-${row.kind}`,
                        text: row.reason ? `${row.kind}: ${row.reason}` : row.kind,
                      }),
                    ),
                    h("td", { "data-label": "Detail" }, ledgerDetail(row)),
                    h("td", { "data-label": "Recorded" }, timeEl(row.recorded_at)),
                  ),
                ),
              ),
            ),
          ),
        ),
  );
}
