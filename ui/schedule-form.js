// @ts-check
/**
 * The schedule form, for creating one and for editing every setting of one. The timing is
 * described in English with its next fires as you type, by the server's own code
 * (`GET /v1/preview`), in UTC, in the schedule's zone and in the viewer's.
 */

import { errorText, unsay } from "./actions.js";
import { createSchedule, previewTiming } from "./api.js";
import { focusEnd, h, setText } from "./dom.js";
import { EditConflict, saveEdit } from "./edit-save.js";
import { viewerZone, zoneText } from "./format.js";
import { jsonText, readInput } from "./json-text.js";
import { notifyError, notifyKeyError, parseNotify } from "./notify.js";
import { numberInput, readNumbers } from "./number-fields.js";

const OVERLAP = ["skip", "allow", "cancel_previous", "buffer_one", "buffer_all"];
const CATCHUP = ["skip_missed", "run_once", "catch_up"];
/** Optional text settings: form id, API field, label, hint. */
const TEXT_SETTINGS = [
  ["f-version", "version", "Version (pinned)", "empty: the latest at each start"],
  ["f-dst", "dst", "DST rule (cron only)", "once (default), wall_clock or <gap>:<repeat>"],
  ["f-concurrency-key", "concurrency_key", "Concurrency key", "schedules with the same key run one at a time"],
  ["f-catchup-window", "catchup_window", "Catch-up window", "e.g. 1h: older missed occurrences are skipped"],
  ["f-start-at", "start_at", "Start at (RFC 3339)", "e.g. 2026-12-01T00:00:00Z"],
  ["f-end-at", "end_at", "End at (RFC 3339)", "no fires after it"],
  ["f-jitter", "jitter", "Jitter", "e.g. 30s: each fire is delayed by up to this"],
  [
    "f-run-timeout",
    "run_timeout",
    "Run timeout",
    "e.g. 30m: the whole execution, across retries; empty: the workflow's",
  ],
  ["f-start-timeout", "start_timeout", "Start timeout", "e.g. 5m: created → first taken by a worker"],
];

/** @param {unknown} notify */
function notifyText(notify) {
  if (notify === undefined || notify === null) return "";
  return typeof notify === "string" ? notify : JSON.stringify(notify);
}

/**
 * @param {string} id
 * @param {string} label
 * @param {HTMLElement} control
 * @param {string} [hint]
 */
function field(id, label, control, hint) {
  if (hint) control.setAttribute("aria-describedby", `${id}-hint`);
  return h(
    "div",
    { class: "field" },
    h("label", { for: id, text: label }),
    control,
    hint ? h("small", { id: `${id}-hint`, class: "muted", text: hint }) : null,
  );
}

/**
 * @param {string} id
 * @param {string[]} values
 * @param {string} value
 */
function select(id, values, value) {
  return h(
    "select",
    { id, name: id },
    values.map((v) => h("option", { value: v, selected: v === value, text: v })),
  );
}

/**
 * The live preview under the timing fields.
 * @param {() => Record<string, string | undefined>} timing
 * @param {() => void} drawn called after each redraw
 */
function previewBox(timing, drawn) {
  const box = h("div", { id: "timing-preview", class: "preview", "aria-live": "polite" });
  let seq = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const update = async () => {
    const t = timing();
    const mine = ++seq;
    if (!t.cron && !t.interval) {
      box.replaceChildren(h("p", { class: "muted", text: "Type a cron expression or an interval to preview it." }));
      return;
    }
    try {
      const p = await previewTiming({ ...t, count: 5 });
      if (mine !== seq) return;
      // null for an interval: its fires are shown in UTC and the viewer's zone only.
      const zone = p.timezone ?? "UTC";
      const viewer = viewerZone();
      box.replaceChildren(
        h("p", { class: "preview-description" }, h("strong", { text: p.description })),
        h(
          "table",
          // One card per fire at 390 px, as every other table (it ran 120 px past a phone's edge).
          { class: "preview-times responsive" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col", text: "UTC" }),
              zone !== "UTC" ? h("th", { scope: "col", text: zone }) : null,
              h("th", { scope: "col", text: `You (${viewer})` }),
            ),
          ),
          h(
            "tbody",
            {},
            p.next_fire_times.map((/** @type {string} */ t) =>
              h(
                "tr",
                {},
                h("td", { class: "mono", "data-label": "UTC", text: t }),
                zone !== "UTC" ? h("td", { "data-label": zone, text: zoneText(t, zone) }) : null,
                h("td", { "data-label": `You (${viewer})`, text: zoneText(t) }),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      if (mine !== seq) return;
      box.replaceChildren(h("p", { class: "form-error", text: errorText(err) }));
    }
    drawn();
  };
  return {
    box,
    /** Debounced: one preview request per pause in typing. */
    schedule() {
      clearTimeout(timer);
      timer = setTimeout(update, 250);
    },
    now: update,
  };
}

/**
 * The form. `sch` given: edit it (PATCH of what changed, fenced by its revision; a revision moved
 * only by fires is read again and the PATCH resent, ui/edit-save.js).
 * `cancelled`: closes an edit form unsaved, from its Cancel button or Escape (it had neither).
 * `saved` may answer what to say under the button, where the user who pressed it looks: "created
 * x", said in the status line at the top of the window, lay over a row of the list above.
 * @param {{sch?: any, workflows?: string[], saved: (sch: any) => Promise<Node | string | void> | Node | string | void, cancelled?: () => void}} o
 */
export function scheduleForm({ sch, workflows = [], saved, cancelled }) {
  const editing = sch !== undefined;
  const p = editing ? "e" : "f";
  const fid = (/** @type {string} */ name) => (editing ? name.replace(/^f-/, "e-") : name);
  const error = h("p", { id: `${p}-form-error`, class: "form-error", role: "alert" });
  const done = h("p", { id: `${p}-form-done`, class: "form-done", role: "status" });
  const kind0 = editing && sch.interval !== undefined ? "interval" : "cron";
  const timingInput = h("input", {
    id: fid("f-timing"),
    required: true,
    placeholder: kind0 === "cron" ? "0 2 * * *" : "10s",
    autocomplete: "off",
    spellcheck: "false",
    value: editing ? (sch.cron ?? sch.interval ?? "") : "",
  });
  const timingLabel = h("label", { for: fid("f-timing"), text: kind0 === "cron" ? "Cron expression" : "Interval" });
  const zone = h("input", {
    id: fid("f-timezone"),
    value: editing ? (sch.timezone ?? "UTC") : "UTC",
    list: "tz-names",
    autocomplete: "off",
    disabled: kind0 !== "cron",
  });
  const maxCatchUp = numberInput(fid("f-max-catch-up"), 1000, editing ? (sch.max_catch_up ?? 10) : 10);
  const maxField = field(fid("f-max-catch-up"), "Max catch-up", maxCatchUp, "required with catch_up");
  const catchup = select(fid("f-catchup"), CATCHUP, editing ? sch.catchup : "skip_missed");
  maxField.hidden = catchup.value !== "catch_up";
  catchup.addEventListener("change", () => {
    maxField.hidden = catchup.value !== "catch_up";
  });
  let kind = kind0;
  const text = (/** @type {string} */ id) =>
    /** @type {HTMLInputElement} */ (form.querySelector(`#${fid(id)}`)).value.trim();
  const preview = previewBox(() => {
    const v = timingInput.value.trim();
    const dst = text("f-dst");
    // The bounds for both kinds, as the schedule will have them: without them the preview listed
    // fires from today for a schedule that starts next year, and none of its end.
    const bounds = { start_at: text("f-start-at") || undefined, end_at: text("f-end-at") || undefined };
    return kind === "cron"
      ? { cron: v, timezone: zone.value.trim() || undefined, dst: dst || undefined, ...bounds }
      : { interval: v, ...bounds };
  }, once);
  // A refusal is said once: after a submit the server refuses for the timing, the preview above
  // held the very sentence the submit line said (a newcomer saw it twice). The submit line, next
  // to the button and announced, keeps it; the preview shows again when it says something else.
  function once() {
    const shown = preview.box.querySelector(".form-error")?.textContent ?? null;
    preview.box.hidden = shown !== null && shown === error.textContent;
  }
  new MutationObserver(once).observe(error, { childList: true, characterData: true, subtree: true });
  const setKind = (/** @type {string} */ k) => {
    kind = k;
    timingLabel.textContent = k === "cron" ? "Cron expression" : "Interval";
    timingInput.placeholder = k === "cron" ? "0 2 * * *" : "10s";
    zone.disabled = k !== "cron";
    preview.schedule();
  };
  const kindRadio = (/** @type {string} */ value, /** @type {string} */ label) =>
    h(
      "label",
      { class: "radio" },
      h("input", {
        type: "radio",
        name: `${p}-kind`,
        value,
        checked: value === kind0,
        onchange: () => setKind(value),
      }),
      ` ${label}`,
    );
  const tzNames = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const optional = TEXT_SETTINGS.map(([id, key, label, hint]) =>
    field(
      fid(id),
      label,
      h("input", { id: fid(id), autocomplete: "off", value: editing ? (sch[key] ?? "") : "" }),
      hint,
    ),
  );
  optional.push(
    field(
      fid("f-pause-on-failure"),
      "Pause on failure",
      numberInput(fid("f-pause-on-failure"), 1000, editing ? (sch.pause_on_failure ?? "") : ""),
      "pause after this many consecutive failed runs; empty: never",
    ),
    field(
      fid("f-max-runs"),
      "Max runs",
      numberInput(fid("f-max-runs"), 1_000_000_000, editing ? (sch.max_runs ?? "") : ""),
      "end the schedule after this many occurrences started (triggers do not count); empty: never",
    ),
    field(
      fid("f-notify"),
      "Notify (webhook)",
      h("input", {
        id: fid("f-notify"),
        autocomplete: "off",
        class: "mono",
        value: editing ? notifyText(sch.notify) : "",
      }),
      'a URL, or JSON: {"url": …, "events": ["failure", "timeout", "dead_letter", "paused", "recovery"]}',
    ),
  );
  const form = h(
    "form",
    {
      id: editing ? "edit-form" : "create-form",
      class: "schedule-form",
      // The create form sits in the list's "New schedule" fold, whose summary names it: its own
      // heading said "New schedule" a second time right under it.
      ...(editing ? { "aria-labelledby": `${p}-heading` } : { "aria-label": "New schedule" }),
      novalidate: true,
    },
    editing ? h("h2", { id: `${p}-heading`, text: `Edit ${sch.schedule_id}` }) : null,
    h(
      "div",
      { class: "grid" },
      editing
        ? null
        : field(
            "f-id",
            "Schedule id",
            h("input", { id: "f-id", required: true, maxlength: 100, autocomplete: "off" }),
            "letters, digits, - _ .",
          ),
      field(
        fid("f-workflow"),
        "Workflow",
        h("input", {
          id: fid("f-workflow"),
          required: true,
          list: "workflow-names",
          autocomplete: "off",
          value: editing ? sch.workflow : "",
        }),
      ),
      h(
        "fieldset",
        { class: "field timing" },
        h("legend", { text: "Timing" }),
        h("div", { class: "radios" }, kindRadio("cron", "cron"), kindRadio("interval", "interval")),
        timingLabel,
        timingInput,
      ),
      field(fid("f-timezone"), "Time zone (cron only)", zone, "IANA name, e.g. Asia/Kolkata"),
      field(fid("f-overlap"), "Overlap", select(fid("f-overlap"), OVERLAP, editing ? sch.overlap : "skip")),
      field(fid("f-catchup"), "Catch-up", catchup),
      maxField,
      field(
        fid("f-input"),
        "Input (JSON object)",
        h("textarea", {
          id: fid("f-input"),
          rows: 4,
          class: "mono",
          // As the server keeps it (`120.0`, json-text.js); sent back so when saved.
          text: editing ? jsonText(sch.input ?? {}) : "{}",
        }),
      ),
      field(
        fid("f-description"),
        "Description",
        h("textarea", {
          id: fid("f-description"),
          rows: 4,
          maxlength: 1000,
          text: editing ? (sch.description ?? "") : "",
        }),
      ),
      h(
        "details",
        { class: "more-settings" },
        h("summary", { text: "More settings" }),
        h("div", { class: "grid" }, optional),
      ),
    ),
    h("section", { class: "preview-wrap", "aria-label": "Timing preview" }, preview.box),
    tzNames.length > 0 && document.getElementById("tz-names") === null
      ? h(
          "datalist",
          { id: "tz-names" },
          tzNames.map((z) => h("option", { value: z })),
        )
      : null,
    document.getElementById("workflow-names") === null
      ? h(
          "datalist",
          { id: "workflow-names" },
          workflows.map((n) => h("option", { value: n })),
        )
      : null,
    error,
    h(
      "div",
      { class: "form-buttons" },
      h("button", { type: "submit", class: "button primary", text: editing ? "Save changes" : "Create schedule" }),
      cancelled ? h("button", { type: "button", class: "button", text: "Cancel", onclick: cancelled }) : null,
    ),
    done,
  );
  form.addEventListener("keydown", (event) => {
    if (cancelled && event.key === "Escape" && !event.defaultPrevented) {
      event.preventDefault();
      cancelled();
    }
  });
  for (const el of [
    timingInput,
    zone,
    form.querySelector(`#${fid("f-dst")}`),
    form.querySelector(`#${fid("f-start-at")}`),
    form.querySelector(`#${fid("f-end-at")}`),
  ]) {
    el?.addEventListener("input", () => preview.schedule());
  }
  // The refusal was of what the form held then: once a field changes it is stale (a fixed cron
  // showed its fires above a refusal of the old one), and the next submit says what holds.
  form.addEventListener("input", () => {
    error.textContent = "";
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    // "created a" must not stay beside this attempt's refusal.
    done.replaceChildren();
    unsay();
    const { input, refusal } = readInput(text("f-input") || "{}");
    if (refusal !== null) {
      setText(error, refusal);
      return;
    }
    /** @type {Record<string, unknown>} */
    const body = { workflow: text("f-workflow"), input };
    if (kind === "cron") {
      body.cron = timingInput.value.trim();
      // Unset and "UTC" are one zone: an edit that leaves it keeps what is stored (it sent
      // `timezone: null` for a stored "UTC", a change nobody asked for; a tester).
      const typed = zone.value.trim();
      const utc = editing && sch.timezone === "UTC" ? "UTC" : null;
      body.timezone = typed === "" || typed === "UTC" ? utc : typed;
      if (editing) body.interval = null;
    } else {
      body.interval = timingInput.value.trim();
      body.timezone = editing && sch.interval !== undefined ? (sch.timezone ?? null) : null;
      if (editing) body.cron = null;
    }
    body.overlap = text("f-overlap");
    body.catchup = text("f-catchup");
    body.description = text("f-description") === "" ? null : text("f-description");
    for (const [id, key] of TEXT_SETTINGS) body[key] = text(id) === "" ? null : text(id);
    // Text that is not a number reads as "" (unset) from the field: refused, nothing sent (a tester).
    const { numbers, refusal: badNumber } = readNumbers(form, fid, body.catchup === "catch_up");
    if (numbers === null) {
      setText(error, badNumber);
      return;
    }
    Object.assign(body, numbers);
    try {
      body.notify = parseNotify(text("f-notify"));
    } catch (err) {
      setText(
        error,
        `INVALID_ARGUMENT: notify is neither a URL nor valid JSON (${/** @type {Error} */ (err).message})`,
      );
      return;
    }
    // The server's rule, checked here as the input's JSON is (a key given twice too): a refused
    // webhook is said before anything is sent.
    const refused = notifyKeyError(text("f-notify")) ?? notifyError(body.notify);
    if (refused !== null) {
      setText(error, refused);
      return;
    }
    try {
      let result;
      if (editing) {
        // Only what changed; null unsets. Unchanged unset settings are left out.
        /** @type {Record<string, unknown>} */
        const patch = {};
        for (const [k, v] of Object.entries(body)) {
          const was = sch[k] ?? null;
          if (jsonText(was) !== jsonText(v)) patch[k] = v;
        }
        if (Object.keys(patch).length === 0) {
          error.textContent = "Nothing changed.";
          return;
        }
        result = await saveEdit(sch, patch);
      } else {
        /** @type {Record<string, unknown>} */
        const create = { schedule_id: text("f-id") };
        for (const [k, v] of Object.entries(body)) if (v !== null) create[k] = v;
        result = await createSchedule(create);
        form.reset();
        setKind("cron");
        maxField.hidden = true;
      }
      const said = await saved(result);
      if (said) {
        done.replaceChildren(said);
        // The button sat at the window's foot (the browser scrolled it just into view to press it).
        done.scrollIntoView({ block: "nearest" });
      }
    } catch (err) {
      if (err instanceof EditConflict) {
        error.replaceChildren(
          `${err.message} `,
          h("button", {
            type: "button",
            id: "e-reload",
            class: "button small",
            text: "Reload the form",
            onclick: () => {
              // The schedule as the server has it now; what was typed here is dropped on purpose.
              const fresh = scheduleForm({ sch: err.fresh, workflows, saved, cancelled });
              form.replaceWith(fresh);
              focusEnd(fresh.querySelector("#e-timing"));
            },
          }),
        );
        return;
      }
      setText(error, errorText(err));
    }
  });
  void preview.now();
  return form;
}
