/**
 * What the PostgreSQL executor does to parameters on the way out and rows on the way in, in place
 * of node-postgres' generic paths, which a herd of 10,000 fires and their leases and completes
 * spends a measured share of the server's CPU in (docs/benchmarks.md § Run H).
 *
 * - **Array parameters** (one per column of a batch: `unnest(?::text[], …)`) are written as an
 *   array literal here. node-postgres quotes every element, numbers included, and escapes each with
 *   two regular-expression passes and two concatenations; a batch's JSON columns (inputs,
 *   triggers, event data) are most of the bytes a fire sends.
 * - **Rows** are read with `rowMode: 'array'` and turned into objects by a function generated once
 *   per result shape (`{ "a": r[0], "b": r[1], … }`, one fixed-shape literal): node-postgres'
 *   object mode copies a null-prototype template (a dictionary object) for every row and then
 *   stores each column by name into it.
 */
import { type ArrayRowBuilder, arrayRowBuilder, objectRows } from "../sql/columns.js";
import type { SqlRow } from "../sql/executor.js";

/** An element of a text array literal: quoted, its backslashes and quotes escaped. */
function quoted(v: string): string {
  if (v.includes("\\")) v = v.replaceAll("\\", "\\\\");
  if (v.includes('"')) v = v.replaceAll('"', '\\"');
  return `"${v}"`;
}

/**
 * `values` as a PostgreSQL array literal (`{1,NULL,"a \"b\""}`), for a parameter cast to an array
 * type (`?::text[]`, `?::bigint[]`, `?::boolean[]`). Only flat arrays of strings, numbers and
 * nulls, which is what the shared SQL binds (columns.ts `arrayParam`); anything else is refused,
 * so a new kind of element is noticed rather than sent wrong. Joined, not concatenated: the
 * driver measures and copies the text, and a string built by `+=` is first flattened.
 */
export function arrayLiteral(values: readonly unknown[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v == null) parts[i] = "NULL";
    else if (typeof v === "string") parts[i] = quoted(v);
    else if (typeof v === "number" && Number.isFinite(v)) parts[i] = String(v);
    else
      throw new TypeError(`an array parameter holds a ${typeof v}; only strings, finite numbers and nulls are bound`);
  }
  return `{${parts.join(",")}}`;
}

/** The parameters as node-postgres should send them: arrays already written as literals. */
export function wireParams(params: readonly unknown[]): unknown[] {
  const out = new Array<unknown>(params.length);
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    out[i] = Array.isArray(p) ? arrayLiteral(p) : p;
  }
  return out;
}

/** A result's columns: one object of the shape per row, from node-postgres' array rows. */
export class RowShapes {
  private readonly shapes = new Map<string, { names: readonly string[]; build: ArrayRowBuilder }>();

  /** `rows` (arrays, in `fields`' order) as objects keyed by the fields' names. */
  objects(key: string, fields: readonly { name: string }[], rows: readonly unknown[][]): SqlRow[] {
    if (rows.length === 0) return [];
    return objectRows(this.builder(key, fields), rows);
  }

  /**
   * The builder of `key` (a statement name), made again when its columns differ (another
   * statement's text under the name, or a server's additive migration seen by a new connection).
   */
  private builder(key: string, fields: readonly { name: string }[]): ArrayRowBuilder {
    const known = this.shapes.get(key);
    if (known && sameNames(known.names, fields)) return known.build;
    const names = fields.map((f) => f.name);
    const build = arrayRowBuilder(names);
    this.shapes.set(key, { names, build });
    return build;
  }
}

function sameNames(names: readonly string[], fields: readonly { name: string }[]): boolean {
  if (names.length !== fields.length) return false;
  for (let i = 0; i < names.length; i++) if (names[i] !== fields[i]?.name) return false;
  return true;
}
