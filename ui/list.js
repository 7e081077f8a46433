// @ts-check
/**
 * The schedules list at any size: server-side search, filters, sort and cursor paging
 * (docs/api.md § Listing and searching schedules). Only one page (50 rows) is ever in the page;
 * the refresh asks for the same page with If-None-Match and redraws only when it changed.
 */
import { actionButtons, reload, say } from "./actions.js";
import { ApiError, getExecution, listExecutions, listWorkflows, searchSchedules } from "./api.js";
import { currentIdentity, may, schedulesHiddenText } from "./auth.js";
import { h, iso } from "./dom.js";
import { outcomeEl, relativeText, stateBadge, timeEl, timingText, workflowText } from "./format.js";
import { scheduleForm } from "./schedule-form.js";
import { polls, workersOrNull } from "./workflows.js";

const PAGE_SIZE = 50;
/**
 * The sorts, each with the order it starts in when picked: most first where more (or later) is what
 * an operator looks for (the most failures, the latest change), soonest or A–Z first otherwise.
 */
const SORTS = [
  ["id", "Schedule id", "asc"],
  ["next_fire", "Next fire", "asc"],
  ["last_fire", "Last fire", "desc"],
  ["workflow", "Workflow", "asc"],
  ["failures", "Consecutive failures", "desc"],
  ["fired", "Fired", "desc"],
  ["skipped", "Skipped", "desc"],
  ["updated", "Last changed", "desc"],
];

/**
 * What the live workers poll, each workflow's name and `name@version`, with the version an unpinned
 * schedule's starts take (the highest not deprecated, else the highest; null when the workflows
 * cannot be listed), or null when the workers cannot be listed (then no row claims that none does).
 * @returns {Promise<{ names: Set<string>, latest: Map<string, string> | null } | null>}
 */
async function polledWorkflows() {
  // Any failure (no access to the workers, an older server) is "cannot be listed".
  const [workers, workflows] = await Promise.all([
    workersOrNull().catch(() => null),
    listWorkflows().catch(() => null),
  ]);
  if (workers === null) return null;
  const names = new Set(
    workers
      .filter((w) => w.status === "live")
      .flatMap((w) => polls(w).flatMap((f) => [f.name, `${f.name}@${f.version}`])),
  );
  if (workflows === null) return { names, latest: null };
  /** @type {Map<string, string>} */
  const latest = new Map();
  // Highest first: the first not deprecated of each name, else its first.
  for (const w of workflows) if (w.deprecated_at === null && !latest.has(w.name)) latest.set(w.name, w.version);
  for (const w of workflows) if (!latest.has(w.name)) latest.set(w.name, w.version);
  return { names, latest };
}

/**
 * Why the schedule's last execution would wait, when that is because no live worker runs what it
 * starts: its workflow, or the version its starts take (its pin, else the latest; a version
 * registered before any worker runs it stalls the schedule as surely, docs/outcomes.md). Only a
 * candidate: the last execution differs from the last outcome's also when an earlier run ended
 * after it (overlap `allow`, `cancel_previous`, a backfill), and then every run may have ended;
 * the row says it only once the server said the last execution is RUNNING ({@link runningLast}).
 * @param {any} sch
 * @param {{ names: Set<string>, latest: Map<string, string> | null } | null} polled
 */
function noWorkerText(sch, polled) {
  const pending = sch.last_execution_id != null && sch.last_outcome?.execution_id !== sch.last_execution_id;
  if (polled === null || !pending) return null;
  if (!polled.names.has(sch.workflow)) return `waiting: no live worker polls ${sch.workflow}`;
  const version = sch.version ?? polled.latest?.get(sch.workflow);
  return version === undefined || polled.names.has(`${sch.workflow}@${version}`)
    ? null
    : `waiting: no live worker polls ${sch.workflow}@${version}`;
}

/** With more candidates than this, the RUNNING executions are listed once rather than each read. */
const READ_EACH_MAX = 100;

/**
 * Which of these last executions are still RUNNING, asked of the server as `orbit schedule list`
 * does: each read (`GET /v1/executions/{id}`, 16 at a time) when there are at most
 * {@link READ_EACH_MAX} (a page has 50 rows), else the RUNNING executions listed once, following
 * `next_cursor`. An execution read as ended never runs again: it goes into `ended` and is not
 * asked again. `complete` is false when the server could not answer for some (no answer, a 5xx):
 * those read as not running, and the next refresh asks again.
 * @param {string[]} ids execution ids
 * @param {Set<string>} ended execution ids read as ended (added to)
 * @returns {Promise<{ running: Set<string>, complete: boolean }>}
 */
async function runningLast(ids, ended) {
  const ask = [...new Set(ids)].filter((id) => !ended.has(id));
  /** @type {Set<string>} */
  const running = new Set();
  let complete = true;
  // A refusal (403) or an execution gone (404) is an answer: nothing to say. No answer is not.
  const unanswered = (/** @type {unknown} */ err) =>
    !(err instanceof ApiError) || err.status === 0 || err.status >= 500 || err.status === 429;
  if (ask.length <= READ_EACH_MAX) {
    for (let i = 0; i < ask.length; i += 16) {
      await Promise.all(
        ask.slice(i, i + 16).map(async (id) => {
          try {
            const e = await getExecution(id);
            if (e?.status === "RUNNING") running.add(id);
            else if (e?.status) ended.add(id);
          } catch (err) {
            if (unanswered(err)) complete = false;
          }
        }),
      );
    }
    return { running, complete };
  }
  const want = new Set(ask);
  /** @type {Set<string>} */
  const listed = new Set();
  try {
    /** @type {string | null} */
    let cursor = null;
    do {
      /** @type {any} */
      const page = await listExecutions({ status: "RUNNING", limit: 1000, cursor });
      for (const e of page.executions) listed.add(e.execution_id);
      cursor = page.next_cursor ?? null;
    } while (cursor !== null);
  } catch (err) {
    return { running, complete: !unanswered(err) };
  }
  for (const id of want) if (listed.has(id)) running.add(id);
  return { running, complete };
}

/**
 * The amber "waiting: no live worker polls …" line under a row's last outcome.
 * @param {string} text
 */
function waitingEl(text) {
  return h("div", { class: "warn-text small clip no-worker", text, title: text });
}

/**
 * The next fire as the API gives it, milliseconds included (a jittered or `.150`-anchored fire):
 * cut to the second it read as an instant up to a second earlier than the real one. The
 * milliseconds are set smaller. The instant is one word (it wrapped after its `T` when the table
 * was short of room, which read as two values).
 * @param {string | null | undefined} iso
 */
function nextFireEl(iso) {
  const el = timeEl(iso);
  const ms = iso ? /^(.*)(\.\d+)Z$/.exec(iso) : null;
  if (ms) el.replaceChildren(ms[1] ?? "", h("small", { class: "ms", text: ms[2] ?? "" }), "Z");
  return el;
}

/** Up to this many characters a workflow's name never wraps. */
const WHOLE_NAME = 24;

/**
 * A workflow's name (and `@version`) that wraps only between words: let to wrap anywhere, the
 * table broke "OrderProcessing" as "OrderProces / sing" at 1280 px with room to spare elsewhere.
 * A name up to {@link WHOLE_NAME} characters is kept whole; a longer one may wrap where a word
 * starts (camelCase, after `-`, `_` or `.`) and before its `@version`, so that rows as wide as
 * they get still leave room for the actions.
 * @param {any} sch
 */
function workflowEl(sch) {
  const name = String(sch.workflow);
  const version = sch.version === undefined || sch.version === null ? "" : `@${sch.version}`;
  if (name.length <= WHOLE_NAME) return h("span", { class: "nowrap", text: workflowText(sch) });
  const words = name.split(/(?<=[a-z0-9])(?=[A-Z])|(?<=[-_.])(?=.)/);
  const parts = [...words, ...(version ? [version] : [])];
  return h(
    "span",
    { class: "name-words" },
    parts.flatMap((w, i) => (i === 0 ? [w] : [h("wbr", {}), w])),
  );
}

/**
 * The timing as the CLI prints it, the expression on one line and a cron's time zone under it, so
 * that a long zone (America/Argentina/Buenos_Aires) does not widen the column past the actions.
 * @param {any} sch
 */
function timingCell(sch) {
  if (sch.cron === undefined) return [h("code", { class: "timing", text: timingText(sch) })];
  return [
    h("code", { class: "timing", text: `cron "${sch.cron}"` }),
    h("div", { class: "muted small timing-zone", text: sch.timezone ?? "UTC" }),
  ];
}

/**
 * @param {any} sch
 * @param {() => Promise<void>} refresh
 * @param {string | null} waiting the "waiting: no live worker polls …" line, when the server said its last execution is RUNNING
 */
function scheduleRow(sch, refresh, waiting) {
  const href = `#/schedules/${encodeURIComponent(sch.schedule_id)}`;
  const next = sch.next_fire_at;
  // A schedule whose occurrences cannot start (last_error) is as much in trouble as one whose runs
  // fail; so is one whose last run was cancelled and its compensation failed (the outcome is
  // CANCELLED, grey, but what the run had done was not undone).
  const compensationFailed = sch.last_outcome?.error_type === "CompensationFailed";
  const failing =
    (sch.consecutive_failures ?? 0) > 0 ||
    sch.last_outcome?.status === "FAILED" ||
    !!sch.last_error ||
    compensationFailed;
  return h(
    "tr",
    { dataset: { scheduleId: sch.schedule_id }, class: failing ? "failing" : "" },
    h(
      "th",
      { scope: "row", "data-label": "Schedule" },
      h("a", { href, text: sch.schedule_id }),
      // dir=auto: a right-to-left text clipped with "…" showed its end (its start was cut on the right).
      sch.description
        ? h("div", { class: "muted small clip", dir: "auto", text: sch.description, title: sch.description })
        : null,
    ),
    h("td", { "data-label": "Workflow" }, workflowEl(sch)),
    h("td", { "data-label": "Timing" }, ...timingCell(sch)),
    h(
      "td",
      { "data-label": "State" },
      stateBadge(sch.state),
      sch.pause_note
        ? h("div", { class: "note clip", dir: "auto", text: sch.pause_note, title: sch.pause_note })
        : null,
    ),
    h(
      "td",
      { "data-label": "Last outcome" },
      outcomeEl(sch),
      compensationFailed
        ? h("div", {
            class: "error-text small clip compensation-failed",
            dir: "auto",
            text: sch.last_outcome.error ?? "compensation failed",
            title: sch.last_outcome.error ?? "compensation failed",
          })
        : null,
      sch.last_error
        ? h("div", {
            class: "error-text small clip start-error",
            text: `not starting: ${iso(sch.last_error)}`,
            title: sch.last_error,
          })
        : null,
      waiting ? waitingEl(waiting) : null,
    ),
    h(
      "td",
      { "data-label": "Next fire (UTC)" },
      nextFireEl(next),
      next ? h("div", { class: "muted small", text: relativeText(next) }) : null,
    ),
    h(
      "td",
      { class: "num", "data-label": "Fired / skipped" },
      `${sch.fired} / `,
      h("span", { class: sch.skipped > 0 ? "warn-text" : "", text: sch.skipped }),
      // Occurrences waiting behind a running one (buffer_one, buffer_all): a backlog that grows
      // while runs outlast the period was seen only on the schedule's page.
      (sch.buffered?.length ?? 0) > 0
        ? h("div", {
            class: "small buffered-count",
            text: `${sch.buffered.length} buffered`,
            title: `waiting to start, oldest ${sch.buffered[0]}`,
          })
        : null,
    ),
    h("td", { class: "actions-cell", "data-label": "Actions" }, actionButtons(sch, refresh)),
  );
}

/** @param {URLSearchParams} params */
function filtersFrom(params) {
  return {
    q: params.get("q") ?? "",
    state: params.get("state") ?? "",
    workflow: params.get("workflow") ?? "",
    outcome: params.get("outcome") ?? "",
    overdue: params.get("overdue") === "1",
    sort: params.get("sort") ?? "id",
    order: params.get("order") === "desc" ? "desc" : "asc",
    // An empty cursor is none (the server reads it so): page 1's rows were labelled as page 2's.
    cursor: params.get("cursor") || null,
    page: Math.max(1, Math.trunc(Number(params.get("page") ?? 1)) || 1),
  };
}

/**
 * The list view: returns its element and a refresh function for the auto-refresh.
 * @param {URLSearchParams} params the filters in the hash (`#/?q=…&state=paused`), so a view can be linked
 */
export function listView(params) {
  const f = filtersFrom(params);
  // The page is in the URL too (`page=3&cursor=…`), so a reload or a link opens it; the cursors of
  // the pages before it are kept in the history entry, so that Previous still steps back one page
  // after a reload (from a link, Previous goes to the first page). They were lost on every reload.
  /** @type {string | null} */
  let cursor = f.cursor;
  /** 0 for the first page. */
  let pageIndex = cursor === null ? 0 : f.page - 1;
  const kept = history.state?.listCursors;
  /** @type {(string | null)[] | null} the cursors of the pages before this one, null when not known */
  let stack =
    pageIndex === 0
      ? []
      : Array.isArray(kept) && kept.length === pageIndex
        ? /** @type {(string | null)[]} */ (kept)
        : null;
  /** @type {any} */
  let shown = null;
  const tbody = h("tbody");
  const summary = h("p", { class: "muted", id: "list-summary", "aria-live": "polite" });
  const empty = h("p", { class: "empty", hidden: true, text: "No schedule matches." });

  const search = h("input", {
    id: "search",
    type: "search",
    placeholder: "id, workflow or description",
    // The server's limit (a longer search is refused with a 400).
    maxlength: 200,
    value: f.q,
    autocomplete: "off",
  });
  const stateSel = h(
    "select",
    { id: "filter-state" },
    [
      ["", "any state"],
      ["active", "active"],
      ["paused", "paused"],
      ["ended", "ended"],
    ].map(([v, t]) => h("option", { value: v, selected: v === f.state, text: t })),
  );
  const outcomeSel = h(
    "select",
    { id: "filter-outcome" },
    [
      ["", "any outcome"],
      ["failed", "failed"],
      ["succeeded", "succeeded"],
      ["cancelled", "cancelled"],
      ["none", "none yet"],
      ["not_starting", "not starting"],
    ].map(([v, t]) => h("option", { value: v, selected: v === f.outcome, text: t })),
  );
  const workflowSel = h(
    "select",
    { id: "filter-workflow" },
    h("option", { value: "", text: "any workflow" }),
    f.workflow ? h("option", { value: f.workflow, selected: true, text: f.workflow }) : null,
  );
  const overdue = h("input", { id: "filter-overdue", type: "checkbox", checked: f.overdue });
  const sortSel = h(
    "select",
    { id: "sort" },
    SORTS.map(([v, t]) => h("option", { value: v, selected: v === f.sort, text: t })),
  );
  const orderBtn = h("button", {
    type: "button",
    id: "order",
    class: "button small",
    "aria-label": f.order === "desc" ? "Descending: switch to ascending" : "Ascending: switch to descending",
    text: f.order === "desc" ? "↓ desc" : "↑ asc",
  });
  const prev = h("button", {
    type: "button",
    id: "page-prev",
    class: "button small",
    text: "← Previous",
    disabled: true,
  });
  const next = h("button", { type: "button", id: "page-next", class: "button small", text: "Next →", disabled: true });
  const pageInfo = h("span", { id: "page-info", class: "muted small" });

  const filtersToggle = h("button", {
    type: "button",
    id: "filters-toggle",
    class: "button small filters-toggle",
    "aria-expanded": "false",
    "aria-controls": "more-filters",
  });
  const filters = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Search and filter schedules" },
    h("div", { class: "field grow" }, h("label", { for: "search", text: "Search" }), search),
    filtersToggle,
    h(
      "div",
      { class: "more-filters", id: "more-filters" },
      h("div", { class: "field" }, h("label", { for: "filter-state", text: "State" }), stateSel),
      h("div", { class: "field" }, h("label", { for: "filter-outcome", text: "Last outcome" }), outcomeSel),
      h("div", { class: "field" }, h("label", { for: "filter-workflow", text: "Workflow" }), workflowSel),
      h(
        "div",
        { class: "field" },
        h("label", { for: "sort", text: "Sort by" }),
        h("div", { class: "row" }, sortSel, orderBtn),
      ),
      h("label", { class: "check" }, overdue, " overdue only"),
    ),
  );
  filters.addEventListener("submit", (e) => e.preventDefault());
  // On a phone the filters filled the whole first screen: below 600 px they fold behind this
  // button (CSS), which says how many are set; wider, it is not shown and they all are.
  const toggleText = () => {
    // A sort other than the default (id, ascending) counts as set: it was left out, so a phone's
    // list sorted by failures said only "Filters and sort".
    const sorted = sortSel.value !== "id" || orderBtn.dataset.order === "desc";
    const set = [stateSel.value, outcomeSel.value, workflowSel.value, overdue.checked, sorted].filter(Boolean).length;
    filtersToggle.textContent = set > 0 ? `Filters and sort (${set} set)` : "Filters and sort";
  };
  toggleText();
  filters.addEventListener("change", toggleText);
  filtersToggle.addEventListener("click", () => {
    const open = filters.classList.toggle("open");
    filtersToggle.setAttribute("aria-expanded", String(open));
  });

  const table = h(
    "table",
    { class: "schedules responsive", "aria-describedby": "list-summary" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        [
          "Schedule",
          "Workflow",
          "Timing",
          "State",
          "Last outcome",
          "Next fire (UTC)",
          "Fired / skipped",
          "Actions",
        ].map((c) => h("th", { scope: "col", text: c })),
      ),
    ),
    tbody,
  );
  const createSlot = h("div");
  const el = h(
    "div",
    { class: "list-view" },
    h("h1", { text: "Schedules" }),
    filters,
    summary,
    h("div", { class: "table-wrap" }, table),
    empty,
    h("nav", { class: "pager", "aria-label": "Pages" }, prev, pageInfo, next),
    createSlot,
  );

  /**
   * Writes the filters and the page into the hash: a new history entry for a page (so that the
   * browser's Back steps back one page; it left the list), the same entry for a filter (none per
   * keystroke).
   */
  function writeHash(newEntry = false) {
    const q = filterParams();
    if (pageIndex > 0 && cursor !== null) {
      q.set("page", String(pageIndex + 1));
      q.set("cursor", cursor);
    }
    const text = q.toString();
    const url = `#/${text ? `?${text}` : ""}`;
    if (newEntry) history.pushState({ listCursors: stack }, "", url);
    else history.replaceState({ listCursors: stack }, "", url);
  }

  /** Writes the filters into the hash and reloads page 1. */
  function changed() {
    stack = [];
    cursor = null;
    pageIndex = 0;
    writeHash();
    void reload(refresh);
  }

  function filterParams() {
    const q = new URLSearchParams();
    if (search.value.trim()) q.set("q", search.value.trim());
    if (stateSel.value) q.set("state", stateSel.value);
    if (outcomeSel.value) q.set("outcome", outcomeSel.value);
    if (workflowSel.value) q.set("workflow", workflowSel.value);
    if (overdue.checked) q.set("overdue", "1");
    if (sortSel.value !== "id") q.set("sort", sortSel.value);
    if (orderBtn.dataset.order === "desc") q.set("order", "desc");
    return q;
  }
  orderBtn.dataset.order = f.order;
  toggleText();
  /** Shows `order` on the order button (the next `changed` writes it into the hash). */
  function setOrder(/** @type {string} */ order) {
    const desc = order === "desc";
    orderBtn.dataset.order = desc ? "desc" : "asc";
    orderBtn.textContent = desc ? "↓ desc" : "↑ asc";
    orderBtn.setAttribute("aria-label", desc ? "Descending: switch to ascending" : "Ascending: switch to descending");
  }
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let typing;
  search.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(changed, 200);
  });
  for (const c of [stateSel, outcomeSel, workflowSel, overdue]) c.addEventListener("change", changed);
  // Picking a sort starts it in its own order: "Consecutive failures" ascending put every healthy
  // schedule first, the failing ones pages later.
  sortSel.addEventListener("change", () => {
    setOrder(SORTS.find(([v]) => v === sortSel.value)?.[2] ?? "asc");
    changed();
  });
  orderBtn.addEventListener("click", () => {
    setOrder(orderBtn.dataset.order === "desc" ? "asc" : "desc");
    toggleText();
    changed();
  });
  next.addEventListener("click", () => {
    if (!shown?.next_cursor) return;
    stack?.push(cursor);
    cursor = shown.next_cursor;
    pageIndex++;
    writeHash(true);
    void reload(refresh).then(() => table.scrollIntoView({ block: "start" }));
  });
  prev.addEventListener("click", () => {
    if (pageIndex === 0) return;
    if (stack === null || stack.length === 0) {
      // Opened from a link on a later page: the pages before it are not known, so the first.
      stack = [];
      cursor = null;
      pageIndex = 0;
    } else {
      cursor = stack.pop() ?? null;
      pageIndex--;
    }
    writeHash(true);
    void reload(refresh);
  });

  let workflowsLoaded = false;
  async function loadWorkflows() {
    if (workflowsLoaded) return;
    workflowsLoaded = true;
    const workflows = await listWorkflows().catch(() => []);
    const names = [...new Set(workflows.map((/** @type {any} */ w) => w.name))];
    // A linked filter on a workflow that is not registered (any more) stays what the list shows.
    if (f.workflow && !names.includes(f.workflow)) names.push(f.workflow);
    workflowSel.replaceChildren(
      h("option", { value: "", text: "any workflow" }),
      ...names.map((n) => h("option", { value: n, selected: n === f.workflow, text: n })),
    );
    const me = currentIdentity();
    if (me !== null && me.kind === "client" && me.allow.some((g) => g.actions.includes("schedule"))) {
      createSlot.replaceChildren(
        h(
          "details",
          { class: "card create", id: "create" },
          h("summary", { text: "New schedule" }),
          scheduleForm({
            workflows: names.filter((n) => may("schedule", n)),
            saved: async (sch) => {
              say(`created ${iso(sch.schedule_id)}: ${timingText(sch)}, next fire ${sch.next_fire_at ?? "-"}`);
              await refresh();
            },
          }),
        ),
      );
    }
  }

  /** The polled workflows the rows were drawn with, as text (a change redraws them). */
  let shownPolled = "";
  /** Last executions the server last said are RUNNING: a redraw keeps their lines until asked again. */
  /** @type {Set<string>} */
  let runningSeen = new Set();
  /** Executions read as ended (they never run again): not asked again. Bounded. */
  /** @type {Set<string>} */
  const ended = new Set();
  /** Whether the last ask went unanswered for some: the next refresh asks again though nothing moved. */
  let unsure = false;
  /** Which ask is the latest: an earlier one that answers later does not touch the rows. */
  let waitsAsked = 0;

  /**
   * Asks the server which candidate rows' last executions are RUNNING (runningLast) and puts the
   * "waiting" line on those rows and off the others, in place (the rows are already drawn).
   * @param {any[]} schedules the rows drawn
   * @param {{ names: Set<string>, latest: Map<string, string> | null } | null} polled
   */
  async function showWaits(schedules, polled) {
    const asked = ++waitsAsked;
    const candidates = schedules.filter((sch) => noWorkerText(sch, polled) !== null);
    if (ended.size > 10_000) ended.clear();
    const { running, complete } = await runningLast(
      candidates.map((sch) => sch.last_execution_id),
      ended,
    );
    if (asked !== waitsAsked) return;
    unsure = !complete;
    runningSeen = running;
    for (const sch of candidates) {
      const row = tbody.querySelector(`tr[data-schedule-id="${CSS.escape(sch.schedule_id)}"]`);
      const cell = row?.querySelector('td[data-label="Last outcome"]');
      if (!cell) continue;
      const text = running.has(sch.last_execution_id) ? noWorkerText(sch, polled) : null;
      const line = cell.querySelector(".no-worker");
      if ((line?.textContent ?? null) === text) continue;
      line?.remove();
      if (text !== null) cell.append(waitingEl(text));
    }
  }

  /** This page of the search the filters ask for. */
  function thisPage() {
    return searchSchedules({
      q: search.value.trim(),
      state: stateSel.value,
      outcome: outcomeSel.value,
      workflow: workflowSel.value,
      overdue: overdue.checked,
      sort: sortSel.value,
      order: orderBtn.dataset.order === "desc" ? "desc" : undefined,
      limit: PAGE_SIZE,
      cursor: cursor ?? undefined,
    });
  }

  async function refresh() {
    const [body, polled] = await Promise.all([
      thisPage().catch((/** @type {any} */ err) => {
        // A cursor the server does not know (a link edited by hand or from another sort): the
        // first page, rather than an error above an empty list until a filter changed.
        if (cursor === null || !(err instanceof ApiError) || err.code !== "INVALID_ARGUMENT") throw err;
        stack = [];
        cursor = null;
        pageIndex = 0;
        writeHash();
        return thisPage();
      }),
      polledWorkflows(),
    ]);
    void loadWorkflows();
    // A 304 hands back the very same object: nothing to redraw (and focus stays where it is),
    // unless a worker came or went.
    const polledKey = polled === null ? "-" : JSON.stringify([[...polled.names].sort(), [...(polled.latest ?? [])]]);
    if (body === shown && polledKey === shownPolled) {
      if (unsure) await showWaits(body.schedules, polled);
      return;
    }
    shown = body;
    shownPolled = polledKey;
    const focused = /** @type {HTMLElement | null} */ (document.activeElement)?.dataset?.focusKey;
    // Drawn at once, with the "waiting" lines the server last confirmed; whether the last
    // executions are still RUNNING is asked after (showWaits), and the lines follow in place.
    const waitingOf = (/** @type {any} */ sch) =>
      runningSeen.has(sch.last_execution_id) ? noWorkerText(sch, polled) : null;
    tbody.replaceChildren(...body.schedules.map((/** @type {any} */ sch) => scheduleRow(sch, refresh, waitingOf(sch))));
    if (focused)
      /** @type {HTMLElement | null} */ (tbody.querySelector(`[data-focus-key="${CSS.escape(focused)}"]`))?.focus();
    const total = body.total ?? body.schedules.length;
    // A page number edited by hand (`page=9` on a list of 134) is kept within the list: it read
    // "401–450 of 134".
    pageIndex = Math.min(pageIndex, Math.max(0, Math.ceil((total - body.schedules.length) / PAGE_SIZE)));
    const first = pageIndex * PAGE_SIZE + 1;
    const last = pageIndex * PAGE_SIZE + body.schedules.length;
    const c = body.counts ?? { active: 0, paused: 0, ended: 0 };
    // The counts by state are before the state filter (what each choice of it would give): said so
    // with one set, where "2 schedules match: 68 active, 2 paused, 2 ended" read as a contradiction.
    const matched = `${total.toLocaleString("en")} ${total === 1 ? "schedule matches" : "schedules match"}`;
    const n = (/** @type {number} */ count) => count.toLocaleString("en");
    const byState = `${n(c.active)} active, ${n(c.paused)} paused, ${n(c.ended)} ended`;
    summary.replaceChildren(
      `${stateSel.value ? `${matched} (state ${stateSel.value}); without that filter: ${byState}` : `${matched}: ${byState}`}.`,
      // A phone has no hover: the hint is hidden there (style.css).
      h("span", { class: "hover-hint", text: " Hover a time to see it in your local time zone." }),
    );
    pageInfo.textContent =
      total === 0 ? "" : `${first.toLocaleString("en")}–${last.toLocaleString("en")} of ${total.toLocaleString("en")}`;
    prev.disabled = pageIndex === 0;
    next.disabled = body.next_cursor === null;
    table.hidden = body.schedules.length === 0;
    empty.hidden = body.schedules.length > 0;
    // An identity without `schedule` on any workflow is shown none (the server lists those it may
    // schedule): say so, rather than that nothing matches.
    empty.textContent = schedulesHiddenText() ?? "No schedule matches.";
    // After the rows are painted; the refresh (and the page's first load) ends once the lines are right.
    await showWaits(body.schedules, polled);
  }

  return { el, refresh, title: "Schedules" };
}
