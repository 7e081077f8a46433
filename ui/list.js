// @ts-check
/**
 * The schedules list at any size: server-side search, filters, sort and cursor paging
 * (docs/api.md § Listing and searching schedules). Only one page (50 rows) is ever in the page;
 * the refresh asks for the same page with If-None-Match and redraws only when it changed.
 */
import { reload } from "./actions.js";
import { latestOnly, listWorkflows, searchSchedules } from "./api.js";
import { currentIdentity, may, schedulesHiddenText } from "./auth.js";
import { h, instantNodes, setText } from "./dom.js";
import { timingText } from "./format.js";
import { oneOf, readLink, SEARCH_MAX, sayLinkNotes, searchRule } from "./link-params.js";
import { mayWaitForWorker, noWorkerText, polledWorkflows, runningLast, waitingEl } from "./no-worker.js";
import { cursorPager } from "./pager.js";
import { scheduleForm } from "./schedule-form.js";
import { scheduleRow } from "./schedule-row.js";

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
 * What the list takes from its link (ui/link-params.js); page and cursor are the pager's.
 * @type {import("./link-params.js").LinkRules}
 */
const LINK_RULES = {
  q: searchRule,
  state: oneOf(["active", "paused", "ended"], "states"),
  workflow: () => null,
  outcome: oneOf(["failed", "succeeded", "cancelled", "none", "not_starting"], "outcomes"),
  overdue: oneOf(["1"], "values"),
  sort: oneOf(
    SORTS.map(([v]) => v),
    "sorts",
  ),
  order: oneOf(["asc", "desc"], "orders"),
};

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
  };
}

/**
 * The list view: returns its element and a refresh function for the auto-refresh.
 * @param {URLSearchParams} link the filters in the hash (`#/?q=…&state=paused`), so a view can be linked
 */
export function listView(link) {
  // A value the list does not understand is left out of the URL (below) and said.
  const { kept: params, notes } = readLink(link, LINK_RULES);
  sayLinkNotes(notes);
  const f = filtersFrom(params);
  // The page is in the URL too, its earlier cursors in the history entry (ui/pager.js).
  const pager = cursorPager(params);
  /** @type {any} */
  let shown = null;
  const tbody = h("tbody");
  // Said until the first answer: on a slow link the page stood with empty headers.
  const summary = h("p", { class: "muted", id: "list-summary", "aria-live": "polite", text: "Loading the schedules…" });
  const empty = h("p", { class: "empty", hidden: true, text: "No schedule matches." });

  const search = h("input", {
    id: "search",
    type: "search",
    placeholder: "id, workflow or description",
    // The server's limit (a longer search is refused with a 400).
    maxlength: SEARCH_MAX,
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

  /** Writes the filters and the page into the hash: a page is a history entry of its own. */
  const writeHash = (newEntry = false) => pager.write("#/", filterParams(), newEntry);

  /** Writes the filters into the hash and reloads page 1. */
  function changed() {
    pager.first();
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
  // The URL says what the list shows: what the link held that it does not understand is left out.
  if (notes.length > 0) writeHash();
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
  pager.buttons({
    next,
    prev,
    table: () => table,
    nextCursor: () => shown?.next_cursor,
    writeHash,
    reload: () => reload(refresh),
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
            // Said under the Create button, with a link to the new schedule: in the status line
            // it lay over a row of the list, at the top of the window.
            saved: async (sch) => {
              await refresh();
              return h(
                "span",
                {},
                "created ",
                h("a", { href: `#/schedules/${encodeURIComponent(sch.schedule_id)}`, text: sch.schedule_id }),
                ...instantNodes(`: ${timingText(sch)}, next fire ${sch.next_fire_at ?? "-"}`),
              );
            },
          }),
        ),
      );
    }
  }

  /** The polled workflows the rows were drawn with, as text (a change redraws them). */
  let shownPolled = "";
  /** Last executions the server last said are RUNNING, with their versions: a redraw keeps their lines until asked again. */
  /** @type {Map<string, string>} */
  let runningSeen = new Map();
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
   * @param {import("./no-worker.js").Polled | null} polled
   */
  async function showWaits(schedules, polled) {
    const asked = ++waitsAsked;
    const candidates = schedules.filter((sch) => mayWaitForWorker(sch, polled));
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
      const on = running.get(sch.last_execution_id);
      const text = on === undefined ? null : noWorkerText(sch, polled, on);
      const line = cell.querySelector(".no-worker");
      // The amber edge other warnings have (pictures.css; a failing row's red one wins).
      row?.classList.toggle("no-worker-row", text !== null);
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
      cursor: pager.cursor ?? undefined,
    });
  }

  /** An earlier refresh (a slow search since retyped) that answers later is dropped. */
  const latestPage = latestOnly();

  async function refresh() {
    const answered = await latestPage((current) =>
      Promise.all([pager.read(thisPage, current, writeHash), polledWorkflows()]),
    );
    if (answered === null) return;
    const [body, polled] = answered.value;
    void loadWorkflows();
    // A 304 hands back the very same object: nothing to redraw (and focus stays where it is),
    // unless a worker came or went.
    const polledKey =
      polled === null
        ? "-"
        : JSON.stringify([[...polled.names].sort(), [...(polled.latest ?? [])], [...(polled.versions ?? [])]]);
    if (body === shown && polledKey === shownPolled) {
      if (unsure) await showWaits(body.schedules, polled);
      return;
    }
    shown = body;
    shownPolled = polledKey;
    const focused = /** @type {HTMLElement | null} */ (document.activeElement)?.dataset?.focusKey;
    // Drawn at once, with the "waiting" lines the server last confirmed; whether the last
    // executions are still RUNNING is asked after (showWaits), and the lines follow in place.
    const waitingOf = (/** @type {any} */ sch) => {
      const on = runningSeen.get(sch.last_execution_id);
      return on === undefined ? null : noWorkerText(sch, polled, on);
    };
    tbody.replaceChildren(...body.schedules.map((/** @type {any} */ sch) => scheduleRow(sch, refresh, waitingOf(sch))));
    if (focused)
      /** @type {HTMLElement | null} */ (tbody.querySelector(`[data-focus-key="${CSS.escape(focused)}"]`))?.focus();
    const total = body.total ?? body.schedules.length;
    // A page number edited by hand (`page=9` on a list of 134) is kept within the list: it read
    // "401–450 of 134".
    pager.clamp(Math.ceil((total - body.schedules.length) / PAGE_SIZE));
    const first = pager.index * PAGE_SIZE + 1;
    const last = pager.index * PAGE_SIZE + body.schedules.length;
    const c = body.counts ?? { active: 0, paused: 0, ended: 0 };
    // The counts by state are before the state filter (what each choice of it would give): said so
    // with one set, where "2 schedules match: 68 active, 2 paused, 2 ended" read as a contradiction.
    const matched = `${total.toLocaleString("en")} ${total === 1 ? "schedule matches" : "schedules match"}`;
    const n = (/** @type {number} */ count) => count.toLocaleString("en");
    const byState = `${n(c.active)} active, ${n(c.paused)} paused, ${n(c.ended)} ended`;
    // An identity that may see no schedule is answered an empty list: its zero counts said
    // "0 schedules match: 0 active, 0 paused, 0 ended" over the line saying it may not see them (a
    // tester). That line (below) is all there is to say.
    const hidden = schedulesHiddenText();
    summary.replaceChildren(
      ...(hidden !== null
        ? []
        : [
            `${stateSel.value ? `${matched} (state ${stateSel.value}); without that filter: ${byState}` : `${matched}: ${byState}`}.`,
            // A phone has no hover: the hint is hidden there (style.css).
            h("span", { class: "hover-hint", text: " Hover a time to see it in your local time zone." }),
          ]),
    );
    pageInfo.textContent =
      total === 0 ? "" : `${first.toLocaleString("en")}–${last.toLocaleString("en")} of ${total.toLocaleString("en")}`;
    prev.disabled = pager.index === 0;
    next.disabled = body.next_cursor === null;
    table.hidden = body.schedules.length === 0;
    empty.hidden = body.schedules.length > 0;
    // An identity without `schedule` on any workflow is shown none (the server lists those it may
    // schedule): say so, rather than that nothing matches.
    setText(empty, hidden ?? "No schedule matches.");
    // After the rows are painted; the refresh (and the page's first load) ends once the lines are right.
    await showWaits(body.schedules, polled);
  }

  return { el, refresh, title: "Schedules" };
}
