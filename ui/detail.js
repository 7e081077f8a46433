// @ts-check
/**
 * One schedule: its last outcome at a glance, its next fire in UTC, in its own zone and in the
 * viewer's, the settings (editable, with a live preview), backfill, the upcoming fires, the ledger
 * over time and by day (failed runs red) and its recent executions.
 */
import { actionButton, actionButtons, carryStatus, errorText, NOT_REFRESHED, reload, say } from "./actions.js";
import { ApiError, getExecution, getSchedule, listExecutions, listWorkflows, occurrencePage } from "./api.js";
import { may, schedulesHiddenText } from "./auth.js";
import { backfill } from "./backfill.js";
import { bidi, focusEnd, h, iso, jsonPre, scrollBox, setText } from "./dom.js";
import { executionBadge, executionLink, stateBadge, timeEl, timingText, workflowLink, zoneText } from "./format.js";
import { glance } from "./glance.js";
import { gridLedger } from "./grid.js";
import { jsonText } from "./json-text.js";
import { ledgerSection } from "./ledger-section.js";
import { lastRunPending } from "./no-worker.js";
import { scheduleForm } from "./schedule-form.js";
import { triggerWithInput } from "./trigger-input.js";
import { upcomingSection } from "./upcoming.js";

/** The newest ledger rows read for the pictures and the dead letters' count. */
const LEDGER_READ = 500;

/** @param {any} sch */
function settingsList(sch) {
  /** @type {[string, any][]} */
  const rows = [
    ["Workflow", [workflowLink(sch.workflow), sch.version ? `@${sch.version}` : ""]],
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
    ["run_timeout", "Run timeout"],
    ["start_timeout", "Start timeout"],
    ["pause_on_failure", "Pause on failure"],
    ["max_runs", "Max runs"],
  ];
  for (const [key, label] of optional) if (sch[key] !== undefined) rows.push([label, String(sch[key])]);
  if (sch.remaining_runs !== undefined) {
    rows.push([
      "Runs left",
      sch.remaining_runs > 0
        ? String(sch.remaining_runs)
        : sch.buffered?.length
          ? sch.paused
            ? "0: the last is buffered, held while paused"
            : "0: the last is buffered, it starts when the running execution ends"
          : "0: every run started, the schedule ended",
    ]);
  }
  if (sch.buffered?.length) {
    rows.push([
      "Buffered",
      bufferedTimes(
        sch.buffered,
        // Paused, it waits for the resume (docs/scheduling.md § Pause and the buffer).
        sch.paused
          ? " (held while paused; starts after a resume once nothing runs)"
          : " (starts when the running execution ends)",
      ),
    ]);
  }
  if (sch.notify !== undefined) {
    const hooks = Array.isArray(sch.notify) ? sch.notify : [sch.notify];
    const shown = hooks.map((n) =>
      typeof n === "string" ? n : `${n.url}${n.events ? ` (${n.events.join(", ")})` : ""}`,
    );
    rows.push(["Notify", shown.join("; ")]);
  }
  if (sch.timezone && sch.next_fire_at) rows.push(["Next fire in its zone", zoneText(sch.next_fire_at, sch.timezone)]);
  rows.push(
    ["Next fire", timeEl(sch.next_fire_at)],
    ["Last fire", timeEl(sch.last_fire_at)],
    ["Last execution", sch.last_execution_id ? executionLink(sch.last_execution_id) : "-"],
    ["Fired / skipped", `${sch.fired} / ${sch.skipped}`],
    ["Created", timeEl(sch.created_at)],
    // updated_at moves with an edit, a pause or a resume; the revision also with every fire, so
    // "Updated <time> (revision 69)" read as 69 edits. Apart, each says what it is.
    ["Last changed", [timeEl(sch.updated_at), h("div", { class: "muted small", text: "edit, pause or resume" })]],
    [
      "Revision",
      [
        String(sch.revision),
        h("div", { class: "muted small", text: "moves with every change and every fire (If-Match)" }),
      ],
    ],
    // As stored: the server keeps the input's text (`120.0`), which JSON.stringify wrote as 120.
    ["Input", jsonPre(jsonText(sch.input), scrollBox("Schedule input"))],
  );
  return h(
    "dl",
    { class: "settings" },
    rows.map(([k, v]) => [h("dt", { text: k }), h("dd", {}, v)]),
  );
}

/** Buffered occurrences listed before "… N more", and after it. */
const BUFFERED_HEAD = 5;
const BUFFERED_TAIL = 1;

/**
 * The occurrences a buffer holds: the count, the oldest few and the newest. Up to 1,000 can wait,
 * and listed whole, 212 of them made the cell 3,066 px tall; the whole list stays one click away.
 * @param {string[]} buffered oldest first
 * @param {string} note when they start
 */
function bufferedTimes(buffered, note) {
  const n = buffered.length;
  /** @param {string[]} times */
  const joined = (times) => times.flatMap((at, i) => (i ? [", ", timeEl(at)] : [timeEl(at)]));
  if (n <= BUFFERED_HEAD + BUFFERED_TAIL + 1) return [`${n}: `, joined(buffered), note];
  const hidden = n - BUFFERED_HEAD - BUFFERED_TAIL;
  return [
    h(
      "span",
      { class: "buffered-short" },
      `${n}: `,
      joined(buffered.slice(0, BUFFERED_HEAD)),
      `, … ${hidden} more, `,
      joined(buffered.slice(-BUFFERED_TAIL)),
      note,
    ),
    h(
      "details",
      { class: "buffered-all" },
      h("summary", { text: `All ${n}` }),
      h("div", { class: "buffered-list small" }, joined(buffered)),
    ),
  ];
}

/**
 * @param {string} scheduleId
 * @param {any[]} executions
 */
function executionsSection(scheduleId, executions) {
  return h(
    "section",
    { class: "card", "aria-labelledby": "executions-heading" },
    h("h2", { id: "executions-heading", text: "Recent executions" }),
    // The newest 20 only: the rest were reachable only through one execution's page (a tester).
    executions.length >= 20
      ? h(
          "p",
          { class: "small", id: "all-executions" },
          "The newest 20; ",
          h("a", { href: `#/executions?schedule_id=${encodeURIComponent(scheduleId)}`, text: "all of its executions" }),
        )
      : null,
    executions.length === 0
      ? h("p", { class: "empty", text: "No executions yet." })
      : h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            // One card per row at 390 px: it stayed a 772 px table in a 324 px box.
            { class: "executions responsive" },
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
              executions
                .slice(0, 20)
                .map((/** @type {any} */ e) =>
                  h(
                    "tr",
                    { dataset: { status: e.status } },
                    h("td", { class: "small", "data-label": "Execution" }, executionLink(e.execution_id)),
                    h("td", { "data-label": "Trigger", text: e.trigger?.type ?? "-" }),
                    h("td", { "data-label": "Status" }, executionBadge(e)),
                    h("td", { "data-label": "Created" }, timeEl(e.created_at)),
                    h("td", { "data-label": "Ended" }, timeEl(e.ended_at)),
                  ),
                ),
            ),
          ),
        ),
  );
}

/**
 * The detail view of schedule `id`.
 * @param {string} id
 */
export function detailView(id) {
  // Said at once, until the first answer: on a slow link the page stood under its title alone.
  const body = h("div", { class: "detail-body" }, h("p", { class: "muted loading", text: "Loading the schedule…" }));
  const heading = h("h1", {}, id);
  const el = h(
    "div",
    { class: "detail-view" },
    h("p", { class: "breadcrumb" }, h("a", { href: "#/", text: "← All schedules" })),
    heading,
    body,
  );
  /** The strip's window, and the fires read for it. @type {{window: string | null, fires?: {key: string, times: string[]}}} */
  const state = { window: null };
  /** @type {any} */
  let last = null;
  let editing = false;
  /** Why the last run waits, when it does. @type {{execution_id: string, message: string} | null} */
  let waiting = null;
  /** @type {string[]} */
  let workflowNames = [];

  function render() {
    const { sch, rows, grid, executions, open } = last;
    // Each started ledger row carries its execution's status (docs/outcomes.md). The statuses were
    // read from the newest 200 executions, so past 200 an older failed run was drawn as started.
    /** @type {Map<string, string>} */
    // A run that hit its timeout is FAILED with error type Timeout: TIMED_OUT here, so the
    // pictures tell it from other failures as the list and the CLI do ("TIMED OUT").
    const statuses = new Map(
      grid.rows
        .filter((/** @type {any} */ row) => row.execution_id && row.status)
        .map((/** @type {any} */ row) => [
          row.execution_id,
          row.status === "FAILED" && row.error_type === "Timeout" ? "TIMED_OUT" : row.status,
        ]),
    );
    heading.replaceChildren(bidi(sch.schedule_id), " ", stateBadge(sch.state));
    const active = /** @type {HTMLElement | null} */ (document.activeElement);
    const focused = active?.dataset?.focusKey ?? active?.dataset?.window;
    const mayEdit = may("schedule", sch.workflow);
    const buttons = actionButtons(sch, refresh, async (deleted) => {
      // A refused delete stays on the page with its refusal; a done one says so on the list.
      if (!deleted) return refresh();
      carryStatus();
      location.hash = "#/";
    });
    if (mayEdit) {
      buttons.prepend(
        actionButton(
          "Edit",
          sch.schedule_id,
          async () => {
            editing = !editing;
            render();
            focusEnd(document.getElementById("e-timing"));
          },
          () => {},
        ),
        actionButton(
          "Backfill",
          sch.schedule_id,
          () => backfill(sch, refresh),
          () => {},
        ),
      );
      buttons
        .querySelector("[data-action=trigger]")
        ?.after(actionButton("Trigger with input", sch.schedule_id, triggerWithInput(sch), refresh));
    }
    const parts = [
      sch.description ? h("p", { class: "description", dir: "auto", text: sch.description }) : null,
      buttons,
      editing && mayEdit
        ? h(
            "section",
            { class: "card edit" },
            scheduleForm({
              sch,
              workflows: workflowNames,
              saved: async (updated) => {
                editing = false;
                say(`saved ${iso(updated.schedule_id)} (revision ${updated.revision}): ${timingText(updated)}`);
                await reload(refresh);
              },
              cancelled: () => {
                editing = false;
                render();
                const edit = `[data-focus-key="${CSS.escape(`Edit:${sch.schedule_id}`)}"]`;
                /** @type {HTMLElement | null} */ (document.querySelector(edit))?.focus();
                void reload(refresh);
              },
            }),
          )
        : null,
      glance(sch, rows, LEDGER_READ, open, waiting !== null),
      sch.pause_note ? h("p", { class: "note" }, h("strong", { text: "Pause note: " }), bidi(sch.pause_note)) : null,
      sch.last_error
        ? h("p", { class: "alert", role: "alert" }, h("strong", { text: "Last error: " }), bidi(sch.last_error))
        : null,
      // Why the last run has not started (no worker for its workflow, every worker busy): the
      // occurrences after it are skipped meanwhile, and the ledger alone does not say why.
      waiting
        ? h(
            "p",
            { class: "note waiting" },
            h("strong", { class: "warn-text", text: "Waiting: " }),
            executionLink(waiting.execution_id),
            " ",
            bidi(waiting.message),
          )
        : null,
      // Its alerts do not reach their webhook: nothing else on the page would say the channel is dead.
      sch.notify_failure
        ? h(
            "p",
            { class: "alert notify-failure", role: "alert" },
            h("strong", { text: "Alerts failing: " }),
            notifyFailureText(sch.notify_failure),
          )
        : null,
      sch.dead_letters.length > 0
        ? h(
            "div",
            { class: "alert dead-letters" },
            h("strong", { text: `Dead letters (the newest ${sch.dead_letters.length}):` }),
            h(
              "ul",
              {},
              sch.dead_letters.map((/** @type {any} */ d) =>
                h("li", {}, timeEl(d.occurrence), " ", bidi(d.error ?? "")),
              ),
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
      ledgerSection(rows, grid, statuses),
      executionsSection(sch.schedule_id, executions),
    ];
    // replaceChildren would turn a null into the text "null".
    body.replaceChildren(...parts.filter((p) => p !== null));
    if (focused)
      /** @type {HTMLElement | null} */ (
        body.querySelector(`[data-focus-key="${CSS.escape(focused)}"], [data-window="${CSS.escape(focused)}"]`)
      )?.focus();
  }

  /** Answered 404: the auto-refresh stops asking (app.js). */
  let notFound = false;
  async function refresh() {
    const hidden = schedulesHiddenText();
    if (hidden !== null) {
      // The server would answer NOT_FOUND, as if the schedule did not exist: say why instead.
      body.replaceChildren(
        h("p", { class: "alert", role: "alert", text: hidden }),
        h("p", {}, h("a", { href: "#/executions", text: "Its executions are on the executions page" })),
      );
      return;
    }
    try {
      // What does not depend on another answer is asked at once, together: chained, the workflows
      // (for the edit form) and the last run waited for the rest, one round trip each (a tester).
      const [sch, ledger, page, open, names] = await Promise.all([
        getSchedule(id),
        occurrencePage(id, LEDGER_READ),
        listExecutions({ schedule_id: id, limit: 20 }),
        openExecutions(id),
        workflowNames.length === 0 ? listWorkflows().catch(() => []) : null,
      ]);
      if (names !== null) workflowNames = [...new Set(names.map((/** @type {any} */ w) => w.name))];
      const executions = page.executions;
      const rows = ledger.occurrences;
      const [grid, lastRun] = await Promise.all([
        gridLedger(id, ledger, sch),
        // The last run, when it has not ended, for why it waits (GET /v1/executions/{id} says).
        lastRunPending(sch) ? getExecution(sch.last_execution_id).catch(() => null) : null,
      ]);
      const waitingWas = JSON.stringify(waiting);
      waiting = lastRun?.waiting ? { execution_id: lastRun.execution_id, message: lastRun.waiting.message } : null;
      // The schedule's whole answer, not its revision alone: a paused schedule lists the fires it
      // would make if resumed now, which move on with the clock while its revision stands still,
      // and the page kept "20:54:00 due 56s ago" a minute after every refresh had answered later
      // ones (a tester). Its answer is not conditional (ETag is its revision), so it is compared.
      const said = JSON.stringify(sch);
      if (
        last !== null &&
        last.said === said &&
        JSON.stringify(waiting) === waitingWas &&
        last.rows === rows &&
        samePages(last.grid.pages, grid.pages) &&
        last.executions === executions &&
        last.open.count === open.count &&
        last.open.more === open.more
      )
        return; // nothing moved (the lists answered 304): keep the page as it is, edits included
      if (editing && last !== null) {
        // Do not redraw under someone typing; the save is fenced by the revision anyway.
        last = { sch: last.sch, said: last.said, rows, grid, executions, open };
        return;
      }
      last = { sch, said, rows, grid, executions, open };
      render();
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) {
        setText(heading, id);
        body.replaceChildren(
          h("p", { class: "alert", role: "alert", text: errorText(err) }),
          ...(err.status === 404 ? [h("p", { class: "muted small", text: NOT_REFRESHED })] : []),
          h("p", {}, h("a", { href: "#/", text: "Back to all schedules" })),
        );
        // A schedule that does not exist was asked for again every 5 s (15 requests in 11 s, each
        // a 404 in the console; a tester): the page stops its auto-refresh (app.js).
        if (err.status === 404) notFound = true;
        return;
      }
      throw err;
    }
  }

  return { el, refresh, title: `${id} · Schedules`, stopped: () => notFound };
}

/**
 * One line for a schedule's failing webhook (`notify_failure`, docs/outcomes.md § Notifications).
 * @param {{event: string, url: string, state: string, attempts: number, error: string}} f
 */
export function notifyFailureText(f) {
  const fate = f.state === "failed" ? "given up" : "retrying";
  return `the ${f.event} alert to ${f.url} failed ${f.attempts} time(s), ${fate}: ${f.error}`;
}

/** The most executions counted as not ended, per status (the list's largest page). */
const OPEN_READ = 1000;

/**
 * How many executions of the schedule have not ended (RUNNING, which includes those waiting for a
 * worker, and COMPENSATING), read from the executions list by status: `more` when a status has
 * more than a page.
 * @param {string} id
 */
async function openExecutions(id) {
  const pages = await Promise.all(
    ["RUNNING", "COMPENSATING"].map((status) => listExecutions({ schedule_id: id, status, limit: OPEN_READ })),
  );
  return {
    count: pages.reduce((n, p) => n + p.executions.length, 0),
    more: pages.some((p) => p.next_cursor !== null && p.next_cursor !== undefined),
  };
}

/**
 * Whether the ledger pages read for the grid are the same answers (each 304) as the last time.
 * @param {any[]} a
 * @param {any[]} b
 */
function samePages(a, b) {
  return a.length === b.length && a.every((page, i) => page === b[i]);
}
