// @ts-check
/**
 * A tiny DOM builder: every text goes in through textContent, never innerHTML, so nothing the
 * server returns (ids, notes, error messages) can inject markup.
 */

/**
 * What `h` returns: typed loosely as the union of the elements the pages build, so that `.value`,
 * `.checked`, `.reset()` read without casts; the DOM checks the rest at run time.
 * @typedef {HTMLElement & HTMLInputElement & Pick<HTMLFormElement, "reset" | "requestSubmit">} El
 */

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * @param {Element} el
 * @param {Record<string, any> | null | undefined} attrs
 */
function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = String(value);
    else if (key === "dataset") Object.assign(/** @type {HTMLElement} */ (el).dataset, value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

/**
 * @template {Element} E
 * @param {E} el
 * @param {any[]} children
 * @returns {E}
 */
function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/**
 * `h("a", {href: "#/"}, "text", child)`: an HTML element.
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...any} children
 * @returns {El}
 */
export function h(tag, attrs, ...children) {
  const el = /** @type {El} */ (document.createElement(tag));
  apply(el, attrs);
  return append(el, children);
}

/**
 * The same for SVG elements.
 * @param {string} tag
 * @param {Record<string, any> | null} [attrs]
 * @param {...any} children
 * @returns {SVGElement}
 */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, attrs);
  return append(el, children);
}

/**
 * An SVG `<title>` child: the hover text of a mark (and its accessible name).
 * @param {string} text
 */
export function title(text) {
  return s("title", { text });
}

/**
 * An element of the page by id (index.html has them all).
 * @param {string} id
 * @returns {El}
 */
export function byId(id) {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} is missing`);
  return /** @type {El} */ (/** @type {unknown} */ (el));
}

/**
 * A modal question (pause note, delete confirmation) in a native `<dialog>`. Resolves to the text
 * entered (or "" without an input) when confirmed, and to null when cancelled or dismissed.
 * `focus`: the field to open on, among `extra` (a dialog that starts work opens on its first field).
 * `confirm`: the work the confirm button does, with the dialog still open; a refusal it returns is
 * shown in the dialog, which stays open with what was typed (a refused backfill closed and lost it).
 * @param {{heading: string, body?: string, inputLabel?: string, confirmLabel: string, danger?: boolean, extra?: HTMLElement[], focus?: HTMLElement, confirm?: () => Promise<string | null>}} o
 * @returns {Promise<string | null>}
 */
export function ask({ heading, body, inputLabel, confirmLabel, danger, extra, focus, confirm }) {
  return new Promise((resolve) => {
    const input = inputLabel ? h("textarea", { id: "dialog-input", rows: 3, maxlength: 1000 }) : null;
    const dialog = /** @type {HTMLDialogElement} */ (
      /** @type {unknown} */ (
        h(
          "dialog",
          { class: "dialog", "aria-labelledby": "dialog-heading" },
          h(
            "form",
            { method: "dialog" },
            h("h2", { id: "dialog-heading", text: heading }),
            body ? h("p", { text: body }) : null,
            input ? [h("label", { for: "dialog-input", text: inputLabel }), input] : null,
            extra ?? null,
            h("p", { id: "dialog-error", class: "error-text", role: "alert" }),
            h(
              "div",
              { class: "dialog-buttons" },
              h("button", { type: "submit", value: "cancel", class: "button", text: "Cancel" }),
              h("button", {
                type: "submit",
                value: "ok",
                class: danger ? "button danger" : "button primary",
                text: confirmLabel,
              }),
            ),
          ),
        )
      )
    );
    dialog.addEventListener("submit", async (event) => {
      const submitter = /** @type {SubmitEvent} */ (event).submitter;
      if (confirm === undefined || /** @type {HTMLButtonElement | null} */ (submitter)?.value !== "ok") return;
      event.preventDefault();
      const error = dialog.querySelector("#dialog-error");
      const buttons = [...dialog.querySelectorAll("button")];
      for (const b of buttons) b.disabled = true;
      const refusal = await confirm();
      for (const b of buttons) b.disabled = false;
      if (refusal === null) dialog.close("ok");
      else if (error) error.textContent = refusal;
    });
    dialog.addEventListener("close", () => {
      const ok = dialog.returnValue === "ok";
      const value = input ? input.value.trim() : "";
      dialog.remove();
      resolve(ok ? value : null);
    });
    document.body.append(dialog);
    dialog.showModal();
    // A question that destroys something opens on its safe answer (WAI-ARIA alert dialog
    // practice): Enter or Space at once must not delete.
    const button = danger ? "button[value=cancel]" : "button[value=ok]";
    (focus ?? input ?? /** @type {HTMLElement} */ (dialog.querySelector(button))).focus();
  });
}

/**
 * `el.replaceChildren(...)` that skips null, false and undefined (replaceChildren would write "null").
 * @param {Element} el
 * @param {...any} children
 */
export function fill(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}
