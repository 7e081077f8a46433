/** The schedules list: a table refreshed in place, the row actions, and the create form. */
import { actionButtons, say } from "./actions.js";
import { createSchedule, listSchedules, listWorkflows } from "./api.js";
import { h } from "./dom.js";
import { relativeText, stateBadge, timeEl, timingText, workflowText } from "./format.js";

const OVERLAP = ["skip", "allow", "cancel_previous", "buffer_one", "buffer_all"];
const CATCHUP = ["skip_missed", "run_once", "catch_up"];

function scheduleRow(sch, refresh) {
  const href = `#/schedules/${encodeURIComponent(sch.schedule_id)}`;
  const next = sch.next_fire_at;
  return h(
    "tr",
    { dataset: { scheduleId: sch.schedule_id } },
    h("th", { scope: "row" }, h("a", { href, text: sch.schedule_id })),
    h("td", { text: workflowText(sch) }),
    h("td", {}, h("code", { text: timingText(sch) })),
    h("td", {}, stateBadge(sch.state), sch.pause_note ? h("div", { class: "note", text: sch.pause_note }) : null),
    h("td", {}, timeEl(next), next ? h("div", { class: "muted small", text: relativeText(next) }) : null),
    h("td", { class: "mono small", text: sch.last_execution_id ?? "-" }),
    h(
      "td",
      { class: "num" },
      `${sch.fired} / `,
      h("span", { class: sch.skipped > 0 ? "warn-text" : "", text: sch.skipped }),
    ),
    h("td", {}, actionButtons(sch, refresh)),
  );
}

function field(id, label, control, hint) {
  return h(
    "div",
    { class: "field" },
    h("label", { for: id, text: label }),
    control,
    hint ? h("small", { id: `${id}-hint`, class: "muted", text: hint }) : null,
  );
}

function select(id, values, value) {
  return h(
    "select",
    { id, name: id },
    values.map((v) => h("option", { value: v, selected: v === value, text: v })),
  );
}

/** The create form; `created(id)` after the server accepted it. */
function createForm(created) {
  const error = h("p", { id: "form-error", class: "form-error", role: "alert" });
  const timingInput = h("input", { id: "f-timing", required: true, placeholder: "0 2 * * *", autocomplete: "off" });
  const timingLabel = h("label", { for: "f-timing", text: "Cron expression" });
  const zone = h("input", { id: "f-timezone", value: "UTC", list: "tz-names", autocomplete: "off" });
  const maxCatchUp = h("input", { id: "f-max-catch-up", type: "number", min: 1, max: 1000, value: 10 });
  const maxField = field("f-max-catch-up", "Max catch-up", maxCatchUp, "required with catch_up");
  maxField.hidden = true;
  const catchup = select("f-catchup", CATCHUP, "skip_missed");
  catchup.addEventListener("change", () => {
    maxField.hidden = catchup.value !== "catch_up";
  });
  const kindRadio = (value, label) =>
    h(
      "label",
      { class: "radio" },
      h("input", { type: "radio", name: "f-kind", value, checked: value === "cron", onchange: () => setKind(value) }),
      ` ${label}`,
    );
  const setKind = (kind) => {
    timingLabel.textContent = kind === "cron" ? "Cron expression" : "Interval";
    timingInput.placeholder = kind === "cron" ? "0 2 * * *" : "10s";
    zone.disabled = kind !== "cron";
  };
  const tzNames = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const form = h(
    "form",
    { id: "create-form", class: "create-form", "aria-labelledby": "create-heading", novalidate: true },
    h("h2", { id: "create-heading", text: "New schedule" }),
    h(
      "div",
      { class: "grid" },
      field(
        "f-id",
        "Schedule id",
        h("input", { id: "f-id", required: true, maxlength: 100, autocomplete: "off" }),
        "letters, digits, - _ .",
      ),
      field(
        "f-workflow",
        "Workflow",
        h("input", { id: "f-workflow", required: true, list: "workflow-names", autocomplete: "off" }),
      ),
      h(
        "fieldset",
        { class: "field timing" },
        h("legend", { text: "Timing" }),
        h("div", { class: "radios" }, kindRadio("cron", "cron"), kindRadio("interval", "interval")),
        timingLabel,
        timingInput,
      ),
      field("f-timezone", "Time zone (cron only)", zone, "IANA name, e.g. Europe/Berlin"),
      field("f-overlap", "Overlap", select("f-overlap", OVERLAP, "skip")),
      field("f-catchup", "Catch-up", catchup),
      maxField,
      field("f-input", "Input (JSON object)", h("textarea", { id: "f-input", rows: 4, class: "mono", text: "{}" })),
      field("f-description", "Description", h("textarea", { id: "f-description", rows: 4, maxlength: 1000 })),
    ),
    h(
      "datalist",
      { id: "tz-names" },
      tzNames.map((z) => h("option", { value: z })),
    ),
    h("datalist", { id: "workflow-names" }),
    error,
    h(
      "div",
      { class: "form-buttons" },
      h("button", { type: "submit", class: "button primary", text: "Create schedule" }),
    ),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const value = (id) => form.querySelector(`#${id}`).value.trim();
    const kind = form.querySelector("input[name=f-kind]:checked").value;
    let input;
    try {
      input = JSON.parse(value("f-input") || "{}");
    } catch (err) {
      error.textContent = `INVALID_ARGUMENT: the input is not valid JSON (${err.message})`;
      return;
    }
    const body = { schedule_id: value("f-id"), workflow: value("f-workflow"), input };
    body[kind] = value("f-timing");
    if (kind === "cron" && value("f-timezone") !== "" && value("f-timezone") !== "UTC") {
      body.timezone = value("f-timezone");
    }
    body.overlap = value("f-overlap");
    body.catchup = value("f-catchup");
    if (body.catchup === "catch_up") body.max_catch_up = Number(value("f-max-catch-up"));
    if (value("f-description") !== "") body.description = value("f-description");
    try {
      const sch = await createSchedule(body);
      form.reset();
      setKind("cron");
      maxField.hidden = true;
      say(`created ${sch.schedule_id}: ${timingText(sch)}, next fire ${sch.next_fire_at ?? "-"}`);
      await created(sch.schedule_id);
    } catch (err) {
      error.textContent = String(err);
    }
  });
  return form;
}

/** The list view: returns its element and a refresh function for the auto-refresh. */
export function listView() {
  const tbody = h("tbody");
  const summary = h("p", { class: "muted", id: "list-summary" });
  const empty = h(
    "p",
    { class: "empty", hidden: true },
    "No schedules yet. Create one below, or with ",
    h("code", { text: "orbit schedule create" }),
    ".",
  );
  const table = h(
    "table",
    { class: "schedules", "aria-describedby": "list-summary" },
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
          "Next fire (UTC)",
          "Last execution",
          "Fired / skipped",
          "Actions",
        ].map((c) => h("th", { scope: "col", text: c })),
      ),
    ),
    tbody,
  );
  const form = createForm(async () => refresh());
  const el = h(
    "div",
    { class: "list-view" },
    h("h1", { text: "Schedules" }),
    summary,
    h("div", { class: "table-wrap" }, table),
    empty,
    form,
  );

  async function refresh() {
    const [{ schedules, truncated }, workflows] = await Promise.all([listSchedules(), listWorkflows().catch(() => [])]);
    const focused = document.activeElement?.dataset?.focusKey;
    tbody.replaceChildren(...schedules.map((sch) => scheduleRow(sch, refresh)));
    if (focused) tbody.querySelector(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
    const by = (st) => schedules.filter((x) => x.state === st).length;
    summary.textContent =
      `${schedules.length} schedule${schedules.length === 1 ? "" : "s"}: ${by("active")} active, ` +
      `${by("paused")} paused, ${by("ended")} ended${truncated ? " (the first 5,000 shown)" : ""}. ` +
      "Hover a time to see it in your local time zone.";
    table.hidden = schedules.length === 0;
    empty.hidden = schedules.length > 0;
    const names = [...new Set(workflows.map((w) => w.name))];
    form.querySelector("#workflow-names").replaceChildren(...names.map((n) => h("option", { value: n })));
  }

  return { el, refresh, title: "Schedules" };
}
