// @ts-check
/**
 * Workflows (every version, its description and input schema, which workers poll it) and workers
 * (what they poll, their last poll, their running tasks). A version no worker polls gets a
 * warning: its executions would wait. The workers list (`GET /v1/workers`) is read tolerantly: a
 * server without it says so.
 */
import { ApiError, listWorkers, listWorkflows } from "./api.js";
import { fill, h, idNodes, jsonPre, scrollBox } from "./dom.js";
import { relativeEl, timeEl, workflowName } from "./format.js";
import { escapeBidi } from "./json-text.js";

/**
 * The workers, or null when the server has no workers list.
 * @returns {Promise<any[] | null>}
 */
export async function workersOrNull() {
  try {
    const body = await listWorkers();
    return Array.isArray(body) ? body : (body?.workers ?? []);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/**
 * What a worker polls, as `{name, version?}` entries (strings are `Name` or `Name@1.0.0`).
 * @param {any} w
 * @returns {{name: string, version: string | null}[]}
 */
export function polls(w) {
  const list = w.workflows ?? w.polls ?? [];
  return list.map((/** @type {any} */ x) => {
    if (typeof x === "string") {
      const [name, version] = x.split("@");
      return { name: name ?? x, version: version ?? null };
    }
    return { name: x.name ?? x.workflow, version: x.version ?? null };
  });
}

/** @param {any} w */
const workerId = (w) => w.worker_id ?? w.id ?? w.name ?? "?";
/** @param {any} w */
const lastPoll = (w) => w.last_poll_at ?? w.last_seen_at ?? w.last_poll ?? null;
/** @param {any} w */
/** A live worker with no free slot that holds no task (GET /v1/workers' `stuck`). */
const STUCK_NOTE =
  "No free slot, yet it holds no task: code of runs that has not returned (a cancel it ignored, a lease it lost) keeps its slots, so it takes no work. Its log names the runs; a restart frees them.";
const running = (w) => w.running_tasks ?? w.running ?? w.tasks ?? 0;

/**
 * The live workers that poll `name@version`. A gone worker (it left, or was not seen for 60 s)
 * polls nothing now: counted, it kept a version's "no worker polls" warning away for an hour after
 * every worker had stopped. Live as the schedules list decides it (ui/list.js).
 * @param {any[] | null} workers
 * @param {string} name
 * @param {string} version
 */
function pollersOf(workers, name, version) {
  return (workers ?? []).filter(
    (w) =>
      w.status === "live" && polls(w).some((p) => p.name === name && (p.version === null || p.version === version)),
  );
}

/** @param {string | null} only show one workflow (`#/workflows/<name>`) */
export function workflowsView(only = null) {
  const body = h("div");
  const el = h(
    "div",
    { class: "workflows-view" },
    only ? h("p", { class: "breadcrumb" }, h("a", { href: "#/workflows", text: "← All workflows" })) : null,
    h("h1", { text: only ?? "Workflows" }),
    body,
  );
  /** @type {any} */
  let shown = null;
  async function refresh() {
    const [workflows, workers] = await Promise.all([listWorkflows(), workersOrNull()]);
    if (shown !== null && shown.workflows === workflows && JSON.stringify(shown.workers) === JSON.stringify(workers))
      return;
    shown = { workflows, workers };
    const list = workflows.filter((/** @type {any} */ w) => only === null || w.name === only);
    /** @type {Map<string, any[]>} */
    const byName = new Map();
    for (const w of list) byName.set(w.name, [...(byName.get(w.name) ?? []), w]);
    if (byName.size === 0) {
      body.replaceChildren(
        h("p", { class: "empty", text: only ? `No workflow ${only}.` : "No workflows registered yet." }),
      );
      return;
    }
    fill(
      body,
      workers === null
        ? h("p", { class: "muted", text: "This server does not list workers (GET /v1/workers)." })
        : null,
      ...[...byName.entries()].map(([name, versions]) =>
        h(
          "section",
          { class: "card", "aria-label": `Workflow ${name}`, dataset: { workflow: name } },
          h(
            "h2",
            {},
            h("a", { href: `#/workflows/${encodeURIComponent(name)}`, text: name }),
            " ",
            h("a", { class: "small", href: `#/?workflow=${encodeURIComponent(name)}`, text: "schedules" }),
            " · ",
            h("a", { class: "small", href: `#/executions?workflow=${encodeURIComponent(name)}`, text: "executions" }),
          ),
          h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { class: "versions responsive" },
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["Version", "Description", "Registered", "Workers polling", "Input schema"].map((c) =>
                    h("th", { scope: "col", text: c }),
                  ),
                ),
              ),
              h(
                "tbody",
                {},
                versions.map((v) => {
                  const pollers = pollersOf(workers, name, v.version);
                  return h(
                    "tr",
                    { dataset: { version: v.version } },
                    h(
                      "th",
                      { scope: "row", "data-label": "Version", class: "mono" },
                      v.version,
                      // "latest" skips a deprecated version (docs/outcomes.md § Deprecated versions).
                      ...(v.deprecated_at
                        ? [" ", h("span", { class: "badge", title: `since ${v.deprecated_at}`, text: "deprecated" })]
                        : []),
                    ),
                    // As `orbit workflow list` shows it (its DESCRIPTION column); the page had none.
                    h(
                      "td",
                      { "data-label": "Description" },
                      v.description
                        ? h("bdi", { class: "workflow-description", dir: "auto", text: v.description })
                        : h("span", { class: "muted", text: "-" }),
                    ),
                    h("td", { "data-label": "Registered" }, timeEl(v.created_at)),
                    h(
                      "td",
                      { "data-label": "Workers polling" },
                      workers === null
                        ? h("span", { class: "muted", text: "unknown" })
                        : pollers.length === 0
                          ? h("span", { class: "badge warn", role: "note", text: "⚠ no worker polls this version" })
                          : pollers.map((w) => [
                              h("a", { href: "#/workers", class: "mono small" }, idNodes(workerId(w))),
                              " ",
                            ]),
                    ),
                    h(
                      "td",
                      { "data-label": "Input schema" },
                      v.input_schema
                        ? h(
                            "details",
                            {},
                            h("summary", { text: "schema" }),
                            jsonPre(
                              escapeBidi(JSON.stringify(v.input_schema, null, 2)),
                              scrollBox(`Input schema of ${name}@${v.version}`),
                            ),
                          )
                        : h("span", { class: "muted", text: "none" }),
                    ),
                  );
                }),
              ),
            ),
          ),
        ),
      ),
    );
  }
  return { el, refresh, title: only ? `${only} · Workflows` : "Workflows" };
}

export function workersView() {
  const body = h("div");
  const el = h("div", { class: "workers-view" }, h("h1", { text: "Workers" }), body);
  /** @type {string | null} */
  let shown = null;
  async function refresh() {
    const workers = await workersOrNull();
    const key = JSON.stringify(workers);
    if (key === shown) return;
    shown = key;
    if (workers === null) {
      body.replaceChildren(h("p", { class: "empty", text: "This server does not list workers (GET /v1/workers)." }));
      return;
    }
    if (workers.length === 0) {
      body.replaceChildren(h("p", { class: "empty", text: "No worker has polled yet." }));
      return;
    }
    body.replaceChildren(
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "workers responsive" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Worker", "Status", "Polls", "Last poll", "Running tasks"].map((c) =>
                h("th", { scope: "col", text: c }),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            workers.map((w) =>
              h(
                "tr",
                { dataset: { worker: workerId(w) }, class: w.status === "gone" ? "gone" : "" },
                h("th", { scope: "row", class: "mono", "data-label": "Worker" }, idNodes(workerId(w))),
                // A worker that left or was not seen for 60 s polls nothing now; it read like a live one.
                h(
                  "td",
                  { "data-label": "Status" },
                  w.stuck === true
                    ? [
                        h("span", { class: "badge worker-stuck", text: "stuck" }),
                        h("div", { class: "muted small", text: STUCK_NOTE }),
                      ]
                    : w.status
                      ? h("span", { class: `badge worker-${w.status}`, text: w.status })
                      : "-",
                ),
                h(
                  "td",
                  { "data-label": "Polls" },
                  polls(w).map((p) =>
                    h(
                      "a",
                      { href: `#/workflows/${encodeURIComponent(p.name)}`, class: "chip" },
                      workflowName(p.name, p.version),
                    ),
                  ),
                ),
                h(
                  "td",
                  { "data-label": "Last poll" },
                  timeEl(lastPoll(w)),
                  lastPoll(w) ? h("div", { class: "muted small" }, relativeEl(lastPoll(w))) : null,
                ),
                h("td", {
                  class: "num",
                  "data-label": "Running tasks",
                  text: String(Array.isArray(running(w)) ? running(w).length : running(w)),
                }),
              ),
            ),
          ),
        ),
      ),
    );
  }
  return { el, refresh, title: "Workers" };
}
