/**
 * Fixed-width tables as the seed prints them (`orbit schedule list`, `orbit ps`): every column but
 * the last is padded to its width; a value as long as its column or longer pushes the rest of the
 * line on with one space (`2026-11-15T19:00:12.359Z -`).
 */
import { oneLine } from "./safe-text.js";

/** A column: its header and its width in characters (the last column's width is ignored). */
export interface Column {
  header: string;
  width: number;
}

export function cell(text: string, width: number): string {
  return text.length < width ? text.padEnd(width) : `${text} `;
}

/**
 * One line (with its newline) of `cells` laid out in `columns`. Every cell goes through
 * {@link oneLine}: a control character from the server neither breaks the row nor drives the
 * terminal, and the width counts what is shown.
 */
export function row(columns: readonly Column[], cells: readonly string[]): string {
  let line = "";
  columns.forEach((column, i) => {
    const text = oneLine(cells[i] ?? "");
    line += i === columns.length - 1 ? text : cell(text, column.width);
  });
  return `${line}\n`;
}

/** The header line and one line per row. */
export function table(columns: readonly Column[], rows: ReadonlyArray<readonly string[]>): string {
  return (
    row(
      columns,
      columns.map((c) => c.header),
    ) + rows.map((cells) => row(columns, cells)).join("")
  );
}
