/** One schedule: its settings, the upcoming fires, the ledger over time and its recent executions. */
import { actionButtons } from "./actions.js";
import { ApiError, getSchedule, listExecutions, listOccurrences } from "./api.js";
import { defaultWindow, ledgerLegend, ledgerTimeline, upcomingStrip, WINDOWS } from "./charts.js";
import { h } from "./dom.js";
import { localText, relativeText, stateBadge, statusBadge, timeEl, timingText, workflowText } from "./format.js";

const LEDGER_ROWS_LISTED = 25;

function settingsList(sch) {
  const rows = [
    ["Workflow", workflowText(sch)],
    ["Timing", h("code", { text: timingText(sch) })],
    ["Overlap", sch.overlap],
    ["Catch-up", sch.catchup],
  ];
  const optional = [
    ["dst", "DST"],
    ["concurrency_key", "Concurrency key"],
    ["max_catch_up", "Max catch-up"],
    ["catchup_window", "Catch-up window"],
    ["start_at", "Start at"],
    ["end_at", "End at"],
    ["jitter", "Jitter"],
  ];
  for (const [key, label] of optional) if (sch[key] !== undefined) rows.push([label, String(sch[key])]);
  rows.push(
    ["Next fire", timeEl(sch.next_fire_at)],
    ["Last fire", timeEl(sch.last_fire_at)],
    ["Last execution", h("span", { class: "mono", text: sch.last_execution_id ?? "-" })],
    ["Fired / skipped", `${sch.fired} / ${sch.skipped}`],
    ["Created", timeEl(sch.created_at)],
    ["Updated", [timeEl(sch.updated_at), ` (revision ${sch.revision})`]],
    ["Input", h("pre", { class: "json", text: JSON.stringify(sch.input, null, 2) })],
  );
  return h(
    "dl",
    { class: "settings" },
    rows.map(([k, v]) => [h("dt", { text: k }), h("dd", {}, v)]),
  );
}

function upcomingSection(sch, state, rerender) {
  const times = sch.next_fire_times;
  const now = Date.now();
  state.window ??= defaultWindow(times, now);
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
  return h(
    "section",
    { class: "card", "aria-labelledby": "upcoming-heading" },
    h("div", { class: "card-head" }, h("h2", { id: "upcoming-heading", text: "Upcoming fires" }), buttons),
    note ? h("p", { class: "muted", text: note }) : null,
    times.length > 0 ? upcomingStrip(times, state.window, now) : null,
    h(
      "ol",
      { class: "fire-list" },
      times.map((t) =>
        h(
          "li",
          {},
          h("time", { datetime: t, class: "mono", text: t }),
          h("span", { class: "local", text: localText(t) }),
          h("span", { class: "muted", text: relativeText(t, now) }),
        ),
      ),
    ),
  );
}

function ledgerDetail(row) {
  if (row.execution_id) return h("span", { class: "mono", text: row.execution_id });
  if (row.kind === "skipped" && row.reason === "missed" && row.range_from) {
    return `${row.count} missed, ${row.range_from} … ${row.range_to}`;
  }
  if (row.error) return h("span", { class: "error-text", text: row.error });
  return row.reason ?? "";
}

function ledgerSection(rows) {
  const listed = rows.slice(0, LEDGER_ROWS_LISTED);
  return h(
    "section",
    { class: "card", "aria-labelledby": "ledger-heading" },
    h("h2", { id: "ledger-heading", text: "The ledger over time" }),
    h("p", {
      class: "muted",
      text: `Every decision the scheduler recorded for this schedule (${rows.length} row${rows.length === 1 ? "" : "s"}). Hover a mark for its details.`,
    }),
    rows.length === 0
      ? h("p", { class: "empty", text: "Nothing recorded yet: the schedule has not fired." })
      : [ledgerTimeline(rows), ledgerLegend(rows)],
    rows.length === 0
      ? null
      : h(
          "details",
          { class: "ledger-rows" },
          h("summary", { text: `The newest ${listed.length} rows` }),
          h(
            "table",
            {},
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
              listed.map((row) =>
                h(
                  "tr",
                  {},
                  h("td", {}, timeEl(row.occurrence ?? row.range_to)),
                  h(
                    "td",
                    {},
                    h("span", {
                      class: `badge ledger-${row.kind}`,
                      text: row.reason ? `${row.kind}: ${row.reason}` : row.kind,
                    }),
                  ),
                  h("td", {}, ledgerDetail(row)),
                  h("td", {}, timeEl(row.recorded_at)),
                ),
              ),
            ),
          ),
        ),
  );
}

function executionsSection(executions) {
  return h(
    "section",
    { class: "card", "aria-labelledby": "executions-heading" },
    h("h2", { id: "executions-heading", text: "Recent executions" }),
    executions.length === 0
      ? h("p", { class: "empty", text: "No executions yet." })
      : h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "executions" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["Execution", "Trigger", "Status", "Created", "Ended"].map((c) => h("th", { scope: "col", text: c })),
              ),
            ),
            h(
              "tbody",
              {},
              executions.map((e) =>
                h(
                  "tr",
                  { dataset: { status: e.status } },
                  h("td", { class: "mono small", text: e.execution_id }),
                  h("td", { text: e.trigger?.type ?? "-" }),
                  h("td", {}, statusBadge(e.status)),
                  h("td", {}, timeEl(e.created_at)),
                  h("td", {}, timeEl(e.ended_at)),
                ),
              ),
            ),
          ),
        ),
  );
}

/** The detail view of schedule `id`. */
export function detailView(id) {
  const body = h("div", { class: "detail-body" });
  const heading = h("h1", {}, id);
  const el = h(
    "div",
    { class: "detail-view" },
    h("p", { class: "breadcrumb" }, h("a", { href: "#/", text: "← All schedules" })),
    heading,
    body,
  );
  const state = { window: null };
  let last = null;

  function render() {
    const { sch, rows, executions } = last;
    heading.replaceChildren(`${sch.schedule_id} `, stateBadge(sch.state));
    const focused = document.activeElement?.dataset?.focusKey ?? document.activeElement?.dataset?.window;
    const parts = [
      sch.description ? h("p", { class: "description", text: sch.description }) : null,
      actionButtons(sch, refresh, async () => {
        location.hash = "#/";
      }),
      sch.pause_note ? h("p", { class: "note" }, h("strong", { text: "Pause note: " }), sch.pause_note) : null,
      sch.last_error
        ? h("p", { class: "alert", role: "alert" }, h("strong", { text: "Last error: " }), sch.last_error)
        : null,
      sch.dead_letters.length > 0
        ? h(
            "div",
            { class: "alert dead-letters" },
            h("strong", { text: `Dead letters (the newest ${sch.dead_letters.length}):` }),
            h(
              "ul",
              {},
              sch.dead_letters.map((d) => h("li", {}, timeEl(d.occurrence), ` ${d.error ?? ""}`)),
            ),
          )
        : null,
      h(
        "div",
        { class: "detail-grid" },
        h(
          "section",
          { class: "card", "aria-labelledby": "settings-heading" },
          h("h2", { id: "settings-heading", text: "Settings" }),
          settingsList(sch),
        ),
        upcomingSection(sch, state, render),
      ),
      ledgerSection(rows),
      executionsSection(executions),
    ];
    // replaceChildren would turn a null into the text "null".
    body.replaceChildren(...parts.filter((p) => p !== null));
    if (focused)
      body.querySelector(`[data-focus-key="${CSS.escape(focused)}"], [data-window="${CSS.escape(focused)}"]`)?.focus();
  }

  async function refresh() {
    try {
      const [sch, rows, executions] = await Promise.all([getSchedule(id), listOccurrences(id), listExecutions(id)]);
      last = { sch, rows, executions };
      render();
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        heading.textContent = id;
        body.replaceChildren(
          h("p", { class: "alert", role: "alert", text: `${err}` }),
          h("p", {}, h("a", { href: "#/", text: "Back to all schedules" })),
        );
        return;
      }
      throw err;
    }
  }

  return { el, refresh, title: `${id} · Schedules` };
}
