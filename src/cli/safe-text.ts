/**
 * Text from the server (descriptions, notes, reasons, errors, labels, ids, input) as the human
 * output prints it: every C0 and C1 control character, DEL, a bidirectional override, and a newline or tab too, is shown as a
 * `\u001b`-style escape. Printed raw, `\u001b]0;…\u0007` retitled the terminal and
 * `\u001b[1A\u001b[2K` erased the line above, so stored text could forge or hide output; a newline
 * broke a one-line field or a table row. `--json` output is the server's JSON, not this.
 */

/**
 * A C0 control (newline and tab included), DEL, a C1 control, or a bidirectional formatting
 * character (U+061C, U+200E–U+200F, U+202A–U+202E, U+2066–U+2069): printed raw, `\u202e` reversed
 * the rest of the line, so a stored error could show text in another order than it holds
 * ("Trojan Source").
 */
function isControl(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/** `text` with each control character written as `\u00XX`: one line, inert on a terminal. */
export function oneLine(text: string): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isControl(code)) continue;
    out += `${text.slice(from, i)}\\u${code.toString(16).padStart(4, "0")}`;
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}
