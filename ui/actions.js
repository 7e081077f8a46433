/**
 * The schedule actions shared by the list and the detail view: pause (with a note), resume,
 * trigger and delete (confirmed). Each reports in the status line and then calls `done`.
 */
import { deleteSchedule, pauseSchedule, resumeSchedule, triggerSchedule } from "./api.js";
import { ask, h } from "./dom.js";

/** Shows a message in the page's status line (role=status, read by screen readers). */
export function say(text, tone = "ok") {
  const box = document.getElementById("status");
  box.replaceChildren(h("p", { class: `message ${tone}`, text }));
}

async function run(what, done) {
  try {
    await what();
  } catch (err) {
    say(String(err), "error");
  } finally {
    await done();
  }
}

export function pause(id, done) {
  return (async () => {
    const note = await ask({
      heading: `Pause ${id}?`,
      body: "A paused schedule does not fire. Resuming continues with the next occurrence after now.",
      inputLabel: "Note (optional, shown with the schedule)",
      confirmLabel: "Pause",
    });
    if (note === null) return;
    await run(async () => {
      await pauseSchedule(id, note);
      say(`paused ${id}`);
    }, done);
  })();
}

export function resume(id, done) {
  return run(async () => {
    await resumeSchedule(id);
    say(`resumed ${id}`);
  }, done);
}

/** Starts an execution now; the answer is the CLI's: "started execution …" or "not started: …". */
export function trigger(id, done) {
  return run(async () => {
    const r = await triggerSchedule(id);
    if (r.started) say(`started execution ${r.execution_id}`);
    else say(r.message ?? `not started (overlap: ${r.overlap})`, "warn");
  }, done);
}

export function remove(id, done) {
  return (async () => {
    const ok = await ask({
      heading: `Delete ${id}?`,
      body: "The schedule stops firing and is removed. The executions it started stay.",
      confirmLabel: "Delete",
      danger: true,
    });
    if (ok === null) return;
    await run(async () => {
      await deleteSchedule(id);
      say(`deleted ${id}`);
    }, done);
  })();
}

/** The buttons of one schedule; `key` keeps keyboard focus across a refresh. */
export function actionButtons(sch, done, afterDelete = done) {
  const id = sch.schedule_id;
  const button = (label, action, cls = "") =>
    h("button", {
      type: "button",
      class: `button small ${cls}`,
      "aria-label": `${label} ${id}`,
      dataset: { action: label.toLowerCase(), focusKey: `${label}:${id}` },
      onclick: () => action(id, label === "Delete" ? afterDelete : done),
      text: label,
    });
  return h(
    "div",
    { class: "actions" },
    sch.paused ? button("Resume", resume) : button("Pause", pause),
    button("Trigger", trigger),
    button("Delete", remove, "danger"),
  );
}
