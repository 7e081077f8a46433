// @ts-check
/**
 * The actions shared by the pages: schedule pause (with a note), resume, trigger and delete
 * (confirmed); execution cancel and retry. Each reports in the status line and then calls `done`.
 * A refusal is shown as the server words it; a 403 says plainly that the identity may not.
 */
import { keyed } from "./action-keys.js";
import {
  ApiError,
  cancelExecution,
  deleteSchedule,
  pauseSchedule,
  resumeSchedule,
  retryExecution,
  triggerSchedule,
} from "./api.js";
import { may } from "./auth.js";
import { ask, h, iso } from "./dom.js";
import { jsonText } from "./json-text.js";
import { errorText, say, sayRefreshFailed } from "./status.js";

// The status line's functions, where the pages have always imported them from.
export {
  carryStatus,
  errorText,
  NOT_REFRESHED,
  reload,
  retract,
  say,
  sayCarried,
  sayRefreshFailed,
  unsay,
} from "./status.js";

/**
 * @param {string} what the action, as its refusal names it ("trigger nightly")
 * @param {() => Promise<void>} act
 * @param {Done} done told whether the action was done
 */
async function run(what, act, done) {
  let ok = true;
  try {
    await act();
  } catch (err) {
    ok = false;
    // Unanswered, the action may have been done all the same (api.js does not abort a write):
    // "could not" would be wrong as often as right. The refresh below shows which it was.
    if (err instanceof ApiError && err.code === "TIMEOUT") say(`${what}: ${iso(err.message)}; refreshing`, "warn");
    // It stays until the next action: the server coming back does not make it have happened.
    else say(`could not ${what}: ${iso(errorText(err))}`, "error");
  }
  // The refresh after the action fails as the action did while the server is down; it escaped as
  // an unhandled rejection. Said beside the action's refusal, as the auto-refresh says it, it goes
  // at the next refresh that succeeds (app.js).
  try {
    await done(ok);
  } catch (err) {
    sayRefreshFailed(err);
  }
}

/** What runs after an action: a refresh, or leaving the page; `ok` says whether the action was done. @typedef {(ok?: boolean) => Promise<void> | void} Done */
/** @typedef {(id: string, done: Done) => Promise<void>} Action */

/** @type {Action} */
export function pause(id, done) {
  return (async () => {
    // Sent from the dialog, which stays open with the note typed when the pause is refused (the
    // server down): it closed, and the note was lost.
    const note = await ask({
      heading: `Pause ${id}?`,
      body: "A paused schedule does not fire. Resuming continues with the next occurrence after now.",
      inputLabel: "Note (optional, shown with the schedule)",
      confirmLabel: "Pause",
      confirm: async () => {
        const field = /** @type {HTMLTextAreaElement | null} */ (document.getElementById("dialog-input"));
        try {
          await pauseSchedule(id, field?.value.trim() ?? "");
          return null;
        } catch (err) {
          return `could not pause ${id}: ${errorText(err)}`;
        }
      },
    });
    if (note === null) return;
    await run(`pause ${id}`, async () => say(`paused ${iso(id)}`), done);
  })();
}

/**
 * Resume, asking whether to catch up on the paused span (`{"catch_up": true}`: its occurrences are
 * decided as after an outage, by the schedule's catch-up setting); the UI could not send it. Left
 * unticked, as Enter at once leaves it, the schedule goes on from the next occurrence after now.
 * @type {Action}
 */
export function resume(id, done) {
  return (async () => {
    const catchUp = h("input", { type: "checkbox", id: "resume-catch-up" });
    const ok = await ask({
      heading: `Resume ${id}?`,
      body: "The schedule fires again from the next occurrence after now.",
      extra: [
        h(
          "label",
          { class: "check" },
          catchUp,
          " Catch up on the paused span: its occurrences are started or skipped as after an outage, by the schedule's catch-up setting",
        ),
      ],
      confirmLabel: "Resume",
      // A refusal is said in the dialog, which stays open (as Pause's).
      confirm: async () => {
        try {
          await resumeSchedule(id, catchUp.checked);
          return null;
        } catch (err) {
          return `could not resume ${id}: ${errorText(err)}`;
        }
      },
    });
    if (ok === null) return;
    const how = catchUp.checked ? ", catching up on the paused span" : "";
    await run(`resume ${id}`, async () => say(`resumed ${iso(id)}${how}`), done);
  })();
}

/** Starts an execution now; the answer is the CLI's: "started execution …" or "not started: …". @type {Action} */
export function trigger(id, done) {
  return run(`trigger ${id}`, () => startNow(id), done);
}

/**
 * One trigger, said in the status line. Pressed again while an earlier one's outcome is unknown
 * (unanswered in 10 s), with the same input, it sends that one's Idempotency-Key (action-keys.js),
 * so the server starts one run for both.
 * @param {string} id
 * @param {unknown} [input] this run's input instead of the schedule's
 */
export async function startNow(id, input = undefined) {
  /** @param {any} r @returns {readonly [string, "ok" | "warn"]} */
  const text = (r) =>
    r.started
      ? [`started execution ${iso(r.execution_id)}${input === undefined ? "" : " with the input given"}`, "ok"]
      : [r.message ?? `not started (overlap: ${r.overlap})`, "warn"];
  const body = input === undefined ? "" : jsonText(input);
  const r = await keyed(`trigger ${id}`, body, (key) => triggerSchedule(id, key, input), text);
  say(...text(r));
}

/** @type {Action} */
export function remove(id, done) {
  return (async () => {
    const ok = await ask({
      heading: `Delete ${id}?`,
      body: "The schedule stops firing and is removed. The executions it started stay.",
      confirmLabel: "Delete",
      danger: true,
    });
    if (ok === null) return;
    const what = `delete ${id}`;
    /** @returns {readonly [string, "ok"]} */
    const text = () => [`deleted ${iso(id)}`, "ok"];
    await run(
      what,
      async () => {
        // Keyed as Trigger is: confirmed again after an unanswered delete that the server applied,
        // it was refused "NOT_FOUND"; the same key is answered with the first delete's 204.
        await keyed(what, "", (key) => deleteSchedule(id, key), text);
        say(...text());
      },
      done,
    );
  })();
}

/** @type {Action} */
export function cancel(id, done) {
  return (async () => {
    const reason = await ask({
      heading: `Cancel ${id}?`,
      body: "The execution stops; compensations run if it has any.",
      inputLabel: "Reason (optional)",
      confirmLabel: "Cancel execution",
      danger: true,
    });
    if (reason === null) return;
    await run(
      `cancel ${id}`,
      async () => {
        const e = await cancelExecution(id, reason);
        const [text, tone] = cancelText(id, e, reason);
        say(text, tone, { about: `execution:${id}`, state: e.status });
      },
      done,
    );
  })();
}

/**
 * What a cancel did, as `orbit cancel` says it (src/cli/executions.ts): an execution that had
 * already ended was said in green as "cancel requested for x: COMPLETED".
 * @param {string} id
 * @param {any} e the execution the server answered with
 * @param {string} reason the reason typed, "" for none
 * @returns {[string, "ok" | "warn"]}
 */
export function cancelText(id, e, reason) {
  if (e.status === "RUNNING" || e.status === "COMPENSATING")
    return [`cancel requested for ${iso(id)}: ${e.status}`, "ok"];
  if (e.status !== "CANCELLED") return [`not cancelled: ${iso(id)} already ended ${e.status}`, "warn"];
  // Cancelling is idempotent: one cancelled before for another reason keeps that reason.
  if (e.cancel_reason !== (reason || "cancelled")) {
    return [
      `not cancelled: ${iso(id)} already ended CANCELLED (cancel reason: ${iso(e.cancel_reason ?? "-")})`,
      "warn",
    ];
  }
  return [`cancelled ${iso(id)}`, "ok"];
}

/** @type {Action} */
export function retry(id, done) {
  return run(
    `retry ${id}`,
    async () => {
      // Keyed as Trigger is: pressed again while the last retry's outcome is unknown, it sends
      // that retry's key, so the server answers both with the one new run.
      const what = `retry ${id}`;
      /** @param {any} e @returns {readonly [string, "ok"]} */
      const text = (e) => [`retried ${iso(id)}: ${e.status ?? "started"}${e.run ? ` (run ${e.run})` : ""}`, "ok"];
      const e = await keyed(what, "", (key) => retryExecution(id, key), text);
      const of = e.status ? { about: `execution:${id}`, state: e.status } : undefined;
      say(...text(e), of);
    },
    done,
  );
}

/**
 * A small action button; `focusKey` keeps keyboard focus across a refresh.
 * @param {string} label
 * @param {string} id
 * @param {Action} action
 * @param {Done} done
 * @param {string} [cls]
 */
export function actionButton(label, id, action, done, cls = "") {
  const key = `${label}:${id}`;
  const button = h("button", {
    type: "button",
    class: `button small ${cls}`,
    "aria-label": `${label} ${id}`,
    dataset: { action: label.toLowerCase(), focusKey: key },
    onclick: async () => {
      // A double click (or Enter pressed twice) started two executions: the button does nothing
      // while its action's request is in flight. aria-disabled rather than disabled, so that the
      // keyboard focus stays on it (a disabled button loses it).
      if (inFlight.has(key)) return;
      // Where the focus goes if a Delete takes its row away: the same button of the rows beside
      // it, read now, before the refresh redraws them (null: not in a table's row).
      const near = label === "Delete" ? neighbours(button) : null;
      inFlight.add(key);
      markBusy(key, true);
      // Released once the request is answered and a double click's time has passed: on a fast
      // server the answer came back between the two clicks of a double click, and the second
      // started another execution. Not held through the refresh after it: a deliberate click
      // once the status line says the first was done is a second action.
      let answered = false;
      let aged = false;
      const release = () => {
        if (!answered || !aged || !inFlight.delete(key)) return;
        markBusy(key, false);
      };
      setTimeout(() => {
        aged = true;
        release();
      }, REPEAT_MS);
      try {
        await action(id, async (ok) => {
          answered = true;
          release();
          await done(ok);
        });
      } finally {
        answered = true;
        release();
      }
      // Pause and Resume replace each other: the redrawn row has the other button, and without
      // this the keyboard focus fell back to the page. A deleted row's place is taken by the next
      // row (or the one before it, or the list's heading when it was the last): after a confirmed
      // Delete the focus fell to the page, and a keyboard user lost their place in the list.
      if (!button.isConnected && isFocusLost()) {
        const other = SUCCESSOR[label];
        const keys = [...(other === undefined ? [] : [`${other}:${id}`]), ...(near ?? [])];
        const target = keys
          .map((k) => /** @type {HTMLElement | null} */ (document.querySelector(`[data-focus-key="${CSS.escape(k)}"]`)))
          .find((el) => el !== null);
        if (target) target.focus();
        else if (near !== null) focusHeading();
      }
    },
    text: label,
  });
  // Redrawn by a refresh while its request is in flight, it stays disabled.
  if (inFlight.has(key)) button.setAttribute("aria-disabled", "true");
  return button;
}

/** How long a click holds its button at least: a double click's second click (or a second Enter) falls in it. */
const REPEAT_MS = 500;

/** The actions (`Label:id`) whose request is in flight. @type {Set<string>} */
const inFlight = new Set();

/**
 * Marks every button of one action (a refresh may have redrawn it) as busy or not.
 * @param {string} key
 * @param {boolean} busy
 */
function markBusy(key, busy) {
  for (const b of document.querySelectorAll(`[data-focus-key="${CSS.escape(key)}"]`)) {
    if (busy) b.setAttribute("aria-disabled", "true");
    else b.removeAttribute("aria-disabled");
  }
}

/** @type {Record<string, string>} the button that takes an action's place once it is done */
const SUCCESSOR = { Pause: "Resume", Resume: "Pause" };

/**
 * The focus keys of the same action in the table rows after and before the button's (the next
 * row's first), so that the focus can stay in the list when the button's row goes; null when the
 * button is not in a table's row (a schedule's page, which a Delete leaves).
 * @param {HTMLElement} button
 * @returns {string[] | null}
 */
function neighbours(button) {
  const row = button.closest("tr");
  if (row === null) return null;
  const action = button.dataset.action ?? "";
  /** @param {Element | null} tr */
  const keyIn = (tr) =>
    /** @type {HTMLElement | null} */ (tr?.querySelector(`[data-action="${CSS.escape(action)}"]`) ?? null)?.dataset
      .focusKey;
  return [keyIn(row.nextElementSibling), keyIn(row.previousElementSibling)].filter((k) => k !== undefined);
}

/** Focuses the page's heading (from script only: `tabindex=-1`), when a deleted row had no neighbour. */
function focusHeading() {
  const heading = document.querySelector("main h1");
  if (!(heading instanceof HTMLElement)) return;
  heading.tabIndex = -1;
  heading.focus();
}

/** Whether focus is nowhere in particular (its element was redrawn away). */
function isFocusLost() {
  return document.activeElement === null || document.activeElement === document.body;
}

/**
 * The buttons of one schedule, only those the identity may use (`schedule` on its workflow).
 * @param {any} sch
 * @param {Done} done
 * @param {Done} [afterDelete]
 */
export function actionButtons(sch, done, afterDelete = done) {
  const id = sch.schedule_id;
  if (!may("schedule", sch.workflow)) return h("span", { class: "muted small", text: "read only" });
  return h(
    "div",
    { class: "actions" },
    // An ended schedule fires no more: there is nothing to pause (a paused one can still be resumed).
    sch.paused
      ? actionButton("Resume", id, resume, done)
      : sch.state === "ended"
        ? null
        : actionButton("Pause", id, pause, done),
    actionButton("Trigger", id, trigger, done),
    actionButton("Delete", id, remove, afterDelete, "danger"),
  );
}
