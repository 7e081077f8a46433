// @ts-check
/**
 * The schedule form's number fields (max catch-up, pause on failure, max runs): built here and read
 * here. Chromium lets a `type=number` field hold text that is not a number (`1e`, `3-`, `--3`), and
 * its `value` is then "", as an empty field's is: the form read it as unset and sent null, so an
 * edit removed the setting and a create left it out without a word (a tester). Such text is now
 * refused before anything is sent.
 */
import { h } from "./dom.js";

/**
 * A number field; `aria-invalid` (set by a refusal) goes as soon as it is typed in again.
 * @param {string} id
 * @param {number} max
 * @param {number | string} value
 */
export function numberInput(id, max, value) {
  const input = h("input", { id, type: "number", min: 1, max, autocomplete: "off", value });
  input.addEventListener("input", () => input.removeAttribute("aria-invalid"));
  return input;
}

/**
 * Whether the field holds text that is not a number: the browser keeps it from `value`, and says
 * so in `validity.badInput` (checked on `valueAsNumber` too, where a browser lacks it).
 * @param {HTMLInputElement} input
 */
export function notANumber(input) {
  return input.validity.badInput || (input.value.trim() !== "" && Number.isNaN(input.valueAsNumber));
}

/**
 * The form's numbers as the API takes them (null for an empty field, so unset; max catch-up only
 * with `catch_up`), or why they cannot be read: the first field whose text is not a number, marked
 * `aria-invalid`, its fold opened and focused, so that the user sees which one.
 * @param {ParentNode} form
 * @param {(id: string) => string} fid the form's id for a field (`f-max-runs` → `e-max-runs` when editing)
 * @param {boolean} catchUp whether catch-up is `catch_up` (otherwise max catch-up is not sent)
 * @returns {{numbers: Record<string, number | null>, refusal: null} | {numbers: null, refusal: string}}
 */
export function readNumbers(form, fid, catchUp) {
  /** @type {[string, string, string][]} */
  const fields = [
    ["f-pause-on-failure", "pause_on_failure", "Pause on failure"],
    ["f-max-runs", "max_runs", "Max runs"],
  ];
  if (catchUp) fields.unshift(["f-max-catch-up", "max_catch_up", "Max catch-up"]);
  /** @type {Record<string, number | null>} */
  const numbers = { max_catch_up: null };
  for (const [id, key, label] of fields) {
    const input = /** @type {HTMLInputElement} */ (form.querySelector(`#${fid(id)}`));
    if (notANumber(input)) {
      input.setAttribute("aria-invalid", "true");
      const fold = input.closest("details");
      if (fold !== null) fold.open = true;
      input.focus();
      const fix = key === "max_catch_up" ? "type a whole number" : "type a whole number, or empty it for none";
      return {
        numbers: null,
        refusal: `INVALID_ARGUMENT: ${label} holds text that is not a number (such as "1e" or "3-"): ${fix}. Nothing was sent.`,
      };
    }
    const text = input.value.trim();
    // An empty max catch-up with catch_up is sent as 0, for the server to refuse in its words.
    numbers[key] = text === "" && key !== "max_catch_up" ? null : Number(text);
  }
  return { numbers, refusal: null };
}
