// @ts-check
/**
 * The per-occurrence grid (Airflow's grid, for one schedule): one row per UTC day, newest first,
 * one square per occurrence in time order, coloured by what became of it: the execution's status
 * for started ones (failed red), the reason for skipped ones. Each square links to its execution
 * and has a title and an accessible name.
 */
import { h } from "./dom.js";

const DAYS = 14;

/**
 * @param {any} row a ledger row
 * @param {Map<string, string>} statuses execution id → status
 */
function cellOf(row, statuses) {
  if (row.kind === "started") {
    const status = (row.execution_id && statuses.get(row.execution_id)) || "STARTED";
    return { cls: `cell status-${status.toLowerCase()}`, label: status.toLowerCase() };
  }
  if (row.kind === "skipped")
    return { cls: `cell skipped reason-${row.reason ?? "other"}`, label: `skipped (${row.reason})` };
  if (row.kind === "dead_letter") return { cls: "cell dead-letter", label: "dead letter" };
  return { cls: "cell buffered", label: row.kind };
}

/**
 * @param {any[]} rows the ledger, any order
 * @param {Map<string, string>} statuses
 */
export function occurrenceGrid(rows, statuses) {
  /** @type {Map<string, any[]>} */
  const byDay = new Map();
  for (const row of rows) {
    const at = row.occurrence ?? row.range_to ?? row.recorded_at;
    const day = at.slice(0, 10);
    const list = byDay.get(day) ?? [];
    list.push(row);
    byDay.set(day, list);
  }
  const days = [...byDay.keys()].sort().reverse().slice(0, DAYS);
  if (days.length === 0) return h("p", { class: "empty", text: "No occurrences yet." });
  return h(
    "table",
    { class: "occurrence-grid", "aria-label": "Occurrences by day (UTC)" },
    h(
      "tbody",
      {},
      days.map((day) => {
        const list = (byDay.get(day) ?? []).sort((a, b) =>
          String(a.occurrence ?? a.range_from ?? "").localeCompare(String(b.occurrence ?? b.range_from ?? "")),
        );
        return h(
          "tr",
          { dataset: { day } },
          h("th", { scope: "row", class: "mono small", text: day }),
          h(
            "td",
            {},
            list.map((row) => {
              const { cls, label } = cellOf(row, statuses);
              const when = row.occurrence ?? `${row.range_from} … ${row.range_to}`;
              const name = `${when}: ${label}${row.count > 1 ? ` ×${row.count}` : ""}${row.error ? `: ${row.error}` : ""}`;
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
