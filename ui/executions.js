// @ts-check
/**
 * Executions: the list (filters: status, workflow, schedule, creation time range; cursor pages)
 * and one execution's page: status, input, result or error, runs, the event history as a
 * timeline, cancel and retry, links to its schedule and workflow.
 */
import { actionButton, cancel, errorText, NOT_REFRESHED, reload, retract, retry } from "./actions.js";
import { ApiError, executionEvents, getExecution, getSchedule, latestOnly, listExecutions } from "./api.js";
import { may } from "./auth.js";
import { bidi, fill, h, idNodes, instantNodes, jsonPre, scrollBox } from "./dom.js";
import { elapsedEl, lateText } from "./elapsed.js";
import {
  executionBadge,
  executionLink,
  relativeEl,
  scheduleLink,
  timeEl,
  workflowLink,
  workflowName,
} from "./format.js";
import { escapeBidi } from "./json-text.js";
import { oneOf, quoted, readLink, sayLinkNotes } from "./link-params.js";
import { cursorPager } from "./pager.js";

const STATUSES = ["RUNNING", "COMPENSATING", "COMPLETED", "FAILED", "CANCELLED"];
const PAGE_SIZE = 50;

/** `2026-11-15T18:51` (a datetime-local value, read as UTC) → RFC 3339. @param {string} v */
const utc = (v) => (v === "" ? undefined : `${v.length === 16 ? `${v}:00` : v}Z`);

/**
 * What the list takes from its link (ui/link-params.js); page and cursor are the pager's. The
 * time range is checked by its fields below: a value that is not a date and time reads as empty.
 * @type {import("./link-params.js").LinkRules}
 */
const LINK_RULES = {
  status: oneOf(STATUSES, "statuses"),
  workflow: () => null,
  schedule_id: () => null,
  after: () => null,
  before: () => null,
};

/** @param {URLSearchParams} link */
export function executionsView(link) {
  // A value the list does not understand is left out of the URL (below) and said.
  const { kept: params, notes } = readLink(link, LINK_RULES);
  const input = (/** @type {string} */ id, /** @type {string} */ key, /** @type {Record<string, any>} */ extra = {}) =>
    h("input", { id, value: params.get(key) ?? "", autocomplete: "off", ...extra });
  const status = h(
    "select",
    { id: "x-status" },
    h("option", { value: "", text: "any status" }),
    STATUSES.map((s) => h("option", { value: s, selected: params.get("status") === s, text: s })),
  );
  const workflow = input("x-workflow", "workflow", { placeholder: "e.g. OrderProcessing" });
  const schedule = input("x-schedule", "schedule_id", { placeholder: "schedule id" });
  const after = input("x-after", "after", { type: "datetime-local", step: 1 });
  const before = input("x-before", "before", { type: "datetime-local", step: 1 });
  const tbody = h("tbody");
  const empty = h("p", { class: "empty", hidden: true, text: "No execution matches." });
  const more = h("button", { type: "button", id: "x-next", class: "button small", text: "Next →", disabled: true });
  const prev = h("button", { type: "button", id: "x-prev", class: "button small", text: "← Previous", disabled: true });
  const pageInfo = h("span", { id: "x-page-info", class: "muted small" });
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter executions" },
    h("div", { class: "field" }, h("label", { for: "x-status", text: "Status" }), status),
    h("div", { class: "field" }, h("label", { for: "x-workflow", text: "Workflow" }), workflow),
    h("div", { class: "field" }, h("label", { for: "x-schedule", text: "Schedule" }), schedule),
    h("div", { class: "field" }, h("label", { for: "x-after", text: "Created after (UTC)" }), after),
    h("div", { class: "field" }, h("label", { for: "x-before", text: "Created before (UTC)" }), before),
    h("div", { class: "field" }, h("button", { type: "submit", class: "button primary", text: "Apply" })),
  );
  // The page is in the URL, its earlier cursors in the history entry, as the schedules list's
  // (ui/pager.js): a reload went to page 1, Back left the list, and there was no Previous.
  const pager = cursorPager(params);
  /** @type {any} */
  let shown = null;
  const filterParams = () => {
    const q = new URLSearchParams();
    if (status.value) q.set("status", status.value);
    if (workflow.value.trim()) q.set("workflow", workflow.value.trim());
    if (schedule.value.trim()) q.set("schedule_id", schedule.value.trim());
    if (after.value) q.set("after", after.value);
    if (before.value) q.set("before", before.value);
    return q;
  };
  const writeHash = (newEntry = false) => pager.write("#/executions", filterParams(), newEntry);
  // A datetime-local field takes only a date and time (`2026-11-15T18:51`), and reads as empty
  // when given anything else: the link's range is what the fields hold.
  for (const [key, field] of /** @type {const} */ ([
    ["after", after],
    ["before", before],
  ])) {
    const given = params.get(key);
    if (given !== null && given !== "" && field.value === "")
      notes.push(`left out ${quoted(key, given)} (not a UTC date and time such as 2026-11-15T18:51)`);
  }
  sayLinkNotes(notes);
  // The URL says what the list shows.
  if (notes.length > 0) writeHash();
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    pager.first();
    writeHash();
    void reload(refresh);
  });
  status.addEventListener("change", () => form.requestSubmit());
  pager.buttons({
    next: more,
    prev,
    table: () => table,
    nextCursor: () => shown?.next_cursor,
    writeHash,
    reload: () => reload(refresh),
  });
  const table = h(
    "table",
    { class: "executions responsive" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Execution", "Workflow", "Schedule", "Status", "Created", "Ended"].map((c) =>
          h("th", { scope: "col", text: c }),
        ),
      ),
    ),
    tbody,
  );
  const el = h(
    "div",
    { class: "executions-view" },
    h("h1", { text: "Executions" }),
    form,
    h("div", { class: "table-wrap" }, table),
    empty,
    h("nav", { class: "pager", "aria-label": "Pages" }, prev, pageInfo, more),
  );
  /** An earlier refresh (a slow filter since changed) that answers later is dropped. */
  const latestPage = latestOnly();
  async function refresh() {
    const thisPage = () =>
      listExecutions({
        status: status.value,
        workflow: workflow.value.trim(),
        schedule_id: schedule.value.trim(),
        created_after: utc(after.value),
        created_before: utc(before.value),
        limit: PAGE_SIZE,
        cursor: pager.cursor ?? undefined,
      });
    const answered = await latestPage((current) => pager.read(thisPage, current, writeHash));
    /** @type {any} */
    const body = answered?.value;
    if (answered === null || body === shown) return;
    shown = body;
    tbody.replaceChildren(
      ...body.executions.map((/** @type {any} */ e) =>
        h(
          "tr",
          { dataset: { executionId: e.execution_id, status: e.status } },
          h("th", { scope: "row", "data-label": "Execution" }, executionLink(e.execution_id)),
          h("td", { "data-label": "Workflow" }, workflowLink(e.workflow, workflowName(e.workflow, e.version))),
          h("td", { "data-label": "Schedule" }, scheduleFact(e, false)),
          h("td", { "data-label": "Status" }, executionBadge(e), failureLine(e)),
          h("td", { "data-label": "Created" }, timeEl(e.created_at)),
          h("td", { "data-label": "Ended" }, timeEl(e.ended_at)),
        ),
      ),
    );
    table.hidden = body.executions.length === 0;
    empty.hidden = body.executions.length > 0;
    more.disabled = body.next_cursor === null;
    prev.disabled = pager.index === 0;
    // The list has no total (the server counts none for executions): the page's number and rows.
    const from = pager.index * PAGE_SIZE + 1;
    const n = body.executions.length;
    pageInfo.textContent = n === 0 ? "" : `page ${pager.index + 1}: ${from}–${from + n - 1}`;
  }
  return { el, refresh, title: "Executions" };
}

/** The most of a failed run's error the list shows; its title has the list's (up to 1,000 characters), its page all. */
const ERROR_SHOWN = 80;

/**
 * A failed run's error under its status: the list said FAILED and no more, so telling one failure
 * from another meant opening each.
 * @param {any} e
 */
function failureLine(e) {
  if (e.status !== "FAILED" || !e.error) return null;
  const given = typeof e.error === "string" ? e.error : String(e.error.message ?? "");
  // `throw new Error("")`: a red FAILED with no text; the type says at least what was thrown.
  const type =
    typeof e.error === "object" && typeof e.error.type === "string" && e.error.type !== "" ? e.error.type : "Error";
  const message = given.trim() !== "" ? given : `${type} (thrown without a message)`;
  // By code points: a cut through a surrogate pair would draw a broken character.
  const chars = [...message];
  const shown = chars.length > ERROR_SHOWN ? `${chars.slice(0, ERROR_SHOWN - 1).join("")}…` : message;
  return h("div", { class: "error-text small run-error", text: shown, title: message });
}

/** What kind of step an event is, for its colour on the timeline. @param {string} type */
function eventTone(type) {
  if (/Failed|Expired|TimedOut/.test(type)) return "bad";
  if (/Retry|Retried|Released/.test(type)) return "retry";
  if (/Compensation/.test(type)) return "compensation";
  if (/Cancel/.test(type)) return "cancel";
  if (/Completed/.test(type)) return "good";
  return "info";
}

/**
 * The event history, oldest first, as a vertical timeline with the offset from the first event.
 * @param {any[]} events
 */
function timeline(events) {
  if (events.length === 0) return h("p", { class: "empty", text: "No events." });
  const t0 = Date.parse(events[0].at);
  return h(
    "ol",
    { class: "timeline", "aria-label": "Event history" },
    events.map((ev) => {
      const dt = Date.parse(ev.at) - t0;
      const data = ev.data ?? {};
      const keys = Object.keys(data);
      return h(
        "li",
        { class: `event tone-${eventTone(ev.type)}`, dataset: { type: ev.type, seq: ev.seq } },
        h("span", { class: "dot", "aria-hidden": "true" }),
        h(
          "div",
          { class: "event-head" },
          h("strong", { text: ev.type }),
          // A step's events name the step in the line itself, not only in the folded data.
          typeof data.step === "string" ? h("code", { class: "event-step", text: ` ${data.step}` }) : null,
          " ",
          h("time", { datetime: ev.at, class: "mono small", text: ev.at }),
          h("span", { class: "muted small", text: ` +${(dt / 1000).toFixed(3).replace(/\.?0+$/, "")}s` }),
        ),
        keys.length === 0
          ? null
          : h(
              "details",
              { class: "event-data" },
              h("summary", { text: keys.slice(0, 4).join(", ") + (keys.length > 4 ? ", …" : "") }),
              jsonPre(escapeBidi(JSON.stringify(data, null, 2)), scrollBox(`Data of event ${ev.seq}`)),
            ),
      );
    }),
  );
}

/**
 * The execution's schedule: a link, or its id alone with why there is no link when the identity
 * may not read it (the server reads schedules to those that may `schedule` their workflow, and
 * answers NOT_FOUND to the others).
 * @param {any} e
 * @param {boolean} [explain] say why under the id (the execution's page), or only on hover (lists)
 */
function scheduleFact(e, explain = true) {
  if (!e.schedule_id) return "-";
  if (may("schedule", e.workflow)) return scheduleLink(e.schedule_id);
  const why = `This identity may not see the schedule: reading it needs the schedule permission on ${e.workflow}.`;
  return [
    h("span", { class: "schedule-id", title: why }, idNodes(e.schedule_id)),
    explain ? h("div", { class: "muted small schedule-hidden", text: why }) : null,
  ];
}

/**
 * A cancel asked of a live execution and not carried out yet, or null. The server records the
 * reason (`cancel_reason`, a `CancelRequested` event) and the execution stays RUNNING until its
 * worker stops; a worker whose code ignores the cancel hands the run back 60 s after it heard of
 * it (docs/workflows.md § Cancellation and compensation). The page showed RUNNING and a live
 * Cancel button for those 65 s, its "cancel requested" line gone after 6 s (a tester).
 * @param {any} e
 * @param {any[]} events
 * @returns {{short: string, long: string, title: string} | null}
 */
function cancelAsked(e, events) {
  if (e.cancel_reason === undefined || (e.status !== "RUNNING" && e.status !== "COMPENSATING")) return null;
  const at = events.findLast((/** @type {any} */ ev) => ev.type === "CancelRequested")?.at ?? null;
  const when = at === null ? "" : ` at ${at}`;
  const reason = ` (reason: ${e.cancel_reason})`;
  if (e.status === "COMPENSATING") {
    const short = `cancel requested${when}; its worker is running the compensations`;
    return {
      short,
      long: `${e.status}: ${short}${reason}.`,
      title: `Cancel requested${when}: the worker is carrying it out.`,
    };
  }
  const short = `cancel requested${when}, waiting for the worker to stop`;
  return {
    short,
    long: `RUNNING: ${short}${reason}. A worker hears of it at once; one whose code ignores it hands the run back 60 s after it heard, and the next lease compensates it.`,
    title: `Cancel requested${when}: the server keeps the first reason, so a second cancel would change nothing.`,
  };
}

/** The Cancel button once a cancel was asked: disabled, saying so, where it invited a second cancel. @param {{title: string}} asked */
function cancelAskedButton(asked) {
  return h("button", {
    type: "button",
    class: "button small danger",
    disabled: true,
    title: asked.title,
    dataset: { action: "cancel-requested" },
    text: "Cancel requested",
  });
}

/** @param {string} id */
export function executionView(id) {
  // One flex item (the heading is a flex box): its pieces were items each, 10 px apart.
  const idEl = () => h("span", { class: "heading-id" }, idNodes(id));
  const heading = h("h1", {}, idEl());
  // Said at once, until the first answer (a slow link left the title alone).
  const body = h(
    "div",
    { class: "execution-body" },
    h("p", { class: "muted loading", text: "Loading the execution…" }),
  );
  const el = h(
    "div",
    { class: "execution-view" },
    h("p", { class: "breadcrumb" }, h("a", { href: "#/executions", text: "← All executions" })),
    heading,
    body,
  );
  /** @type {any} */
  let last = null;
  /** Answered 404: the auto-refresh stops asking (app.js). */
  let notFound = false;
  async function refresh() {
    let e;
    let events;
    try {
      [e, events] = await Promise.all([getExecution(id), executionEvents(id)]);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 403)) {
        // As a missing schedule's page does: the way back under the alert.
        body.replaceChildren(
          h("p", { class: "alert", role: "alert", text: errorText(err) }),
          ...(err.status === 404 ? [h("p", { class: "muted small", text: NOT_REFRESHED })] : []),
          h("p", {}, h("a", { href: "#/executions", text: "Back to all executions" })),
        );
        // An execution that does not exist was asked for again every 5 s, each a 404 in the console.
        if (err.status === 404) notFound = true;
        return;
      }
      throw err;
    }
    // The schedule's jitter, when it has one, is part of a scheduled run's delay.
    const jitter =
      e.trigger?.scheduled_for && e.schedule_id && may("schedule", e.workflow)
        ? ((await getSchedule(e.schedule_id).catch(() => null))?.jitter ?? null)
        : null;
    // A "cancel requested …: RUNNING" said earlier no longer holds once it is CANCELLED.
    retract(`execution:${id}`, e.status);
    if (last !== null && last.e.status === e.status && last.events === events) return;
    last = { e, events };
    heading.replaceChildren(idEl(), " ", executionBadge(e));
    const live = e.status === "RUNNING" || e.status === "COMPENSATING";
    const buttons = h("div", { class: "actions" });
    const asked = cancelAsked(e, events);
    if (live && may("cancel", e.workflow))
      buttons.append(asked === null ? actionButton("Cancel", id, cancel, refresh, "danger") : cancelAskedButton(asked));
    if ((e.status === "FAILED" || e.status === "CANCELLED") && may("start", e.workflow))
      buttons.append(actionButton("Retry", id, retry, refresh));
    /** @type {[string, any][]} */
    const facts = [
      [
        "Status",
        [executionBadge(e), asked === null ? null : h("div", { class: "warn-text small", text: asked.short })],
      ],
      ["Workflow", workflowLink(e.workflow, `${e.workflow}@${e.version}`)],
      ["Schedule", scheduleFact(e)],
      [
        "Trigger",
        e.trigger
          ? instantNodes(`${e.trigger.type}${e.trigger.occurrence ? ` (occurrence ${e.trigger.occurrence})` : ""}`)
          : "-",
      ],
      ["Created", timeEl(e.created_at)],
    ];
    const due = e.trigger?.scheduled_for;
    const runStartedAt = events.findLast((/** @type {any} */ ev) => ev.type === "WorkflowRetried")?.at ?? null;
    // Taken by a worker: a WorkflowTaskStarted event for the current run. An execution is created
    // (and `started_at` set) when it is queued, so before that it waits, and is said to.
    const taken = events.some(
      (/** @type {any} */ ev) => ev.type === "WorkflowTaskStarted" && (runStartedAt === null || ev.at >= runStartedAt),
    );
    const takenAt = events.find((/** @type {any} */ ev) => ev.type === "WorkflowTaskStarted")?.at ?? null;
    const late = lateText(e, taken, jitter ?? undefined, takenAt);
    if (due) facts.push(["Scheduled for", timeEl(due)]);
    facts.push(
      [
        taken || !e.started_at ? "Started" : "Queued",
        [timeEl(e.started_at), late ? h("div", { class: "muted small late", text: late }) : null],
      ],
      ["Ended", [timeEl(e.ended_at), e.ended_at ? [" (", relativeEl(e.ended_at), ")"] : ""]],
      ["Elapsed", elapsedEl(e, runStartedAt, taken || !e.started_at)],
    );
    if (e.run !== undefined) facts.push(["Run", String(e.run)]);
    if (e.attempt !== undefined) facts.push(["Attempt", String(e.attempt)]);
    if (e.cancel_reason !== undefined) facts.push(["Cancel reason", e.cancel_reason ?? "-"]);
    // Why it has not started: no worker for its workflow, every worker busy (as `orbit status` says).
    if (e.waiting) facts.push(["Waiting", h("span", { class: "waiting" }, bidi(e.waiting.message))]);
    const runs = events.filter((/** @type {any} */ ev) => /ContinuedAsNew|Retried|Retry/.test(ev.type));
    fill(
      body,
      asked === null ? null : h("p", { class: "note cancel-asked", text: asked.long }),
      buttons,
      h(
        "div",
        { class: "detail-grid" },
        h(
          "section",
          { class: "card", "aria-labelledby": "facts-heading" },
          h("h2", { id: "facts-heading", text: "Execution" }),
          h(
            "dl",
            { class: "settings" },
            facts.map(([k, v]) => [h("dt", { text: k }), h("dd", {}, v)]),
          ),
        ),
        h(
          "section",
          { class: "card", "aria-labelledby": "io-heading" },
          h("h2", { id: "io-heading", text: "Input and result" }),
          h("h3", { text: "Input" }),
          jsonPre(escapeBidi(JSON.stringify(e.input, null, 2)), { id: "x-input", ...scrollBox("Execution input") }),
          e.error !== null && e.error !== undefined
            ? [
                h("h3", { text: "Error" }),
                jsonPre(escapeBidi(JSON.stringify(e.error, null, 2)), {
                  class: "json error-text",
                  id: "x-error",
                  ...scrollBox("Execution error"),
                }),
              ]
            : null,
          e.result !== null && e.result !== undefined
            ? [
                h("h3", { text: "Result" }),
                jsonPre(escapeBidi(JSON.stringify(e.result, null, 2)), {
                  id: "x-result",
                  ...scrollBox("Execution result"),
                }),
              ]
            : null,
        ),
      ),
      h(
        "section",
        { class: "card", "aria-labelledby": "history-heading" },
        h("h2", { id: "history-heading", text: `Event history (${events.length})` }),
        runs.length > 0
          ? h("p", { class: "muted", text: `${runs.length + 1} runs: retries and continue-as-new are marked.` })
          : null,
        timeline(events),
      ),
      e.schedule_id
        ? h(
            "p",
            {},
            "More of this schedule: ",
            h("a", { href: `#/executions?schedule_id=${encodeURIComponent(e.schedule_id)}`, text: "its executions" }),
          )
        : null,
    );
  }
  return { el, refresh, title: `${id} · Executions`, stopped: () => notFound };
}
