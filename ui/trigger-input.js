// @ts-check
/**
 * Trigger with an input for this one run (`POST …/trigger {"input": …}`), from a schedule's page.
 * The UI always sent `{}`, so a one-off run with another input needed the CLI (a tester).
 */
import { errorText, startNow } from "./actions.js";
import { ask, h } from "./dom.js";
import { jsonText, readInput } from "./json-text.js";

/**
 * The action of a schedule's "Trigger with input" button. The box starts with the schedule's own
 * input, to be changed; what it holds is checked as the create form's input is (JSON, no key twice)
 * before anything is sent, and a refusal (there or the server's) is said in the dialog, which
 * stays open with the text typed. Emptied, the run takes the schedule's input (none is sent).
 * Trigger pressed again after an unanswered request, here or in a dialog opened again, with the
 * same input, sends that request's Idempotency-Key (actions.js `startNow`) and starts nothing more.
 * @param {any} sch
 * @returns {import("./actions.js").Action}
 */
export function triggerWithInput(sch) {
  return async (id, done) => {
    const field = h("textarea", {
      id: "trigger-input",
      rows: 6,
      class: "mono",
      spellcheck: "false",
      text: jsonText(sch.input ?? {}),
    });
    const ok = await ask({
      heading: `Trigger ${id} with an input?`,
      body: "Starts one execution now with the input below instead of the schedule's, for this run only. Empty, it takes the schedule's input.",
      extra: [h("label", { for: "trigger-input", text: "Input (JSON object)" }), field],
      confirmLabel: "Trigger",
      focus: field,
      confirm: async () => {
        const text = field.value.trim();
        let input;
        if (text !== "") {
          const read = readInput(text);
          if (read.refusal !== null) return read.refusal;
          input = read.input;
        }
        try {
          await startNow(id, input);
          return null;
        } catch (err) {
          return `could not trigger ${id}: ${errorText(err)}`;
        }
      },
    });
    if (ok !== null) await done(true);
  };
}
