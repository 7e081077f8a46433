// @ts-check
/**
 * A tiny DOM builder: every text goes in through textContent, never innerHTML, so nothing the
 * server returns (ids, notes, error messages) can inject markup; and every text it is given is
 * shown with its bidirectional controls as escapes ({@link textNodes}), so none can reorder it.
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
    else if (key === "text") setText(el, value);
    else if (key === "dataset") Object.assign(/** @type {HTMLElement} */ (el).dataset, value);
    else if (SHOWN_ATTRS.has(key)) el.setAttribute(key, shownText(value));
    else el.setAttribute(key, value === true ? "" : String(value));
  }
}

/** The attributes a browser shows or reads out as text: a tooltip reordered as the page did. */
const SHOWN_ATTRS = new Set(["title", "aria-label", "placeholder", "alt"]);

/**
 * The bidirectional formatting characters: marks, embeddings, overrides and isolates (U+061C,
 * U+200E, U+200F, U+202A–U+202E, U+2066–U+2069). In user text they still acted: a worker id
 * `w…\u202eevil` read "…live" beside a real "live" badge, an error ending in `\u202eRTL` read
 * "LTR". They are shown as the CLI prints them (src/cli/safe-text.ts), `\u202e`, set muted.
 */
const CONTROL = /([\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069])/;
const CONTROLS = new RegExp(CONTROL.source, "g");
/**
 * {@link iso}'s own isolate, told apart from the user's (whose are shown as escapes): two
 * noncharacters, First Strong Isolate and Pop Directional Isolate once the text is drawn.
 */
const ISO_OPEN = "\ufdd0";
const ISO_CLOSE = "\ufdd1";

/** `\u202e` for U+202E. @param {string} c */
const escapeOf = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** iso's marks as the isolates they stand for. @param {string} t */
const isolates = (t) => t.replaceAll(ISO_OPEN, "\u2068").replaceAll(ISO_CLOSE, "\u2069");

/**
 * User text as plain text is shown: each bidirectional control as its escape (`\u202e`). For what
 * holds no markup: an attribute, an `<option>`, an SVG `<text>` or `<title>`, the document's title.
 * @param {unknown} text
 */
export function shownText(text) {
  return isolates(String(text).replace(CONTROLS, escapeOf));
}

/**
 * User text as nodes: its runs, and each bidirectional control as its escape in a muted
 * `span.control-escape` (style.css).
 * @param {unknown} text
 * @returns {(Node | string)[]}
 */
export function textNodes(text) {
  const parts = isolates(String(text)).split(CONTROL);
  if (parts.length === 1) return parts;
  // split with a capture: the controls are at the odd places.
  return parts.map((p, i) => (i % 2 === 0 ? p : h("span", { class: "control-escape", text: escapeOf(p) })));
}

/** Elements whose text can hold no element: the escapes are written into the text. */
const PLAIN = new Set(["OPTION", "TITLE", "STYLE", "SCRIPT"]);

/**
 * Sets an element's text as the page shows user text ({@link textNodes}); a `<textarea>`'s is its
 * value, kept as it is (an edit must send back what was stored).
 * @param {Element} el
 * @param {unknown} text
 */
export function setText(el, text) {
  if (el instanceof HTMLTextAreaElement) el.textContent = String(text);
  else if (!(el instanceof HTMLElement) || PLAIN.has(el.tagName)) el.textContent = shownText(text);
  else el.replaceChildren(...textNodes(text));
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
    if (child instanceof Node) el.append(child);
    else if (el instanceof HTMLTextAreaElement) el.append(String(child));
    else if (!(el instanceof HTMLElement) || PLAIN.has(el.tagName)) el.append(shownText(child));
    else el.append(...textNodes(child));
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
 * Characters that can turn text right to left or reorder it: right-to-left scripts, and the
 * invisible marks, embeddings, overrides and isolates (U+200E, U+200F, U+061C, U+202A–U+202E,
 * U+2066–U+2069).
 */
const BIDI =
  /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]|\ud802[\udc00-\udfff]|\ud83a[\udc00-\udfff]/;

/**
 * User text (an id, a note, an error) inside a sentence of the page, isolated so that its direction
 * stays in it: an unclosed right-to-left override in a description reversed the words after it.
 * Text without such characters comes back as it was; with them, between First Strong Isolate and
 * Pop Directional Isolate, which close whatever the text left open (a status line is plain text).
 * Those two are marks here that `h` and `fill` draw as the isolates (its controls as escapes).
 * @param {unknown} text
 */
export function iso(text) {
  // The text's own noncharacters would pass for the isolate's marks.
  const t = String(text).replace(/[\ufdd0\ufdd1]/g, "\ufffd");
  return BIDI.test(t) ? `${ISO_OPEN}${t}${ISO_CLOSE}` : t;
}

/**
 * User text as an element of its own, isolated (`<bdi>`: its direction from its own first letter,
 * none of it leaking into the text around it).
 * @param {unknown} text
 */
export function bidi(text) {
  return h("bdi", { text: String(text) });
}

/**
 * The attributes of a box that may scroll (a long error, input or picture in a box of bounded
 * size): in the keyboard's order (`tabindex=0`) so that its arrow keys scroll it, a region named
 * `label` so that a screen reader says what it reached. Without them axe-core's
 * scrollable-region-focusable failed (serious) on a long error and the ledger at 390 px, and a
 * keyboard could not read past the box's first lines. Each label is unique on its page (axe's
 * landmark-unique).
 * @param {string} label
 */
export function scrollBox(label) {
  return { tabindex: 0, role: "region", "aria-label": label };
}

/**
 * A `<pre>` of JSON text whose strings are each isolated: a right-to-left string (`"שלום"`) next to
 * a number took the punctuation between them into its own direction.
 * @param {string} json
 * @param {Record<string, any>} [attrs]
 */
export function jsonPre(json, attrs = {}) {
  const pre = h("pre", { class: "json", ...attrs });
  let at = 0;
  for (const m of json.matchAll(/"(?:[^"\\]|\\.)*"/g)) {
    const index = m.index ?? 0;
    pre.append(json.slice(at, index), bidi(m[0]));
    at = index + m[0].length;
  }
  pre.append(json.slice(at));
  return pre;
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
      // A button its dialog holds disabled meanwhile (Backfill while a range is counted) stays so.
      for (const b of buttons) b.disabled = b.dataset.hold === "true";
      if (refusal === null) dialog.close("ok");
      else if (error) setText(error, refusal);
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
    focusEnd(focus ?? input ?? dialog.querySelector(button));
  });
}

/**
 * Focuses a field with the caret after its text: focus() alone put it before a pre-filled value,
 * so typing at once (a timing, a backfill's start) prepended to it.
 * @param {Element | null | undefined} el
 */
export function focusEnd(el) {
  if (!(el instanceof HTMLElement)) return;
  el.focus();
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    const end = el.value.length;
    try {
      el.setSelectionRange(end, end);
    } catch {
      // An input type without a caret (number, date) throws: focus is all it takes.
    }
  }
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

/** An instant as the UI writes it (2026-12-07T04:00:00Z), in an id or a sentence. */
const INSTANT_IN_TEXT = /\d{4}-\d\d-\d\dT[\d:.]+Z?/g;

/**
 * Text cut into its instants (each kept whole: `span.instant`, style.css, or the class given) and
 * the pieces between and around them split at their colons, a break allowed after each colon.
 * @param {string} text
 * @param {string} className
 * @param {(piece: string) => Node | string} piece how a piece between colons is drawn
 * @returns {(Node | string)[]}
 */
function splitInstants(text, className, piece) {
  /** @type {(Node | string)[]} */
  const nodes = [];
  const plain = (/** @type {string} */ part) => {
    for (const [i, p] of part.split(":").entries()) {
      if (i > 0) nodes.push(":", h("wbr"));
      if (p !== "") nodes.push(piece(p));
    }
  };
  let at = 0;
  for (const m of text.matchAll(INSTANT_IN_TEXT)) {
    const index = m.index ?? 0;
    plain(text.slice(at, index));
    nodes.push(h("span", { class: className, text: m[0] }));
    at = index + m[0].length;
  }
  plain(text.slice(at));
  return nodes;
}

/**
 * Text with each instant in it kept whole (`span.instant`, style.css, or the class given) and an
 * id's colons as its only other breaks: at 360 px a browser broke "2026-12-" / "07T04:00:00Z" at
 * the hyphen.
 * @param {string} text
 * @param {string} [className]
 * @returns {(Node | string)[]}
 */
export function instantNodes(text, className = "instant") {
  return splitInstants(text, className, (p) => p);
}

/** Up to this many characters a part of an id between its colons is never broken. */
const WHOLE_ID_PART = 24;

/**
 * An id (an execution's, a schedule's, a worker's) that breaks only after a colon: each instant in
 * it is whole, and so is each part between its colons of up to {@link WHOLE_ID_PART} characters
 * (`span.id-part`, style.css), where a browser broke "fail-15s:2026-12-" / "07T00:10:45Z" at a
 * hyphen. A longer part (a schedule id may be 100 characters) breaks where it must, at a hyphen
 * first and anywhere as a last resort: kept whole, `long-xxx…` made the executions list 2,419 px
 * wide in its 1,232 px box, its Status, Created and Ended columns out of view.
 * @param {string} id
 * @returns {(Node | string)[]}
 */
export function idNodes(id) {
  return splitInstants(String(id), "instant", (p) =>
    h("span", { class: p.length > WHOLE_ID_PART ? "id-part long" : "id-part", text: p }),
  );
}
