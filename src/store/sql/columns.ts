/**
 * Each table's columns, declared once (docs/storage.md § Column tables). A table is an object from
 * a record's field to its column: the column's name, its PostgreSQL type, how the field is bound
 * and how the driver's value is read back. Everything that must agree by position — the column
 * list of an INSERT, its `?` marks, the parameters, PostgreSQL's `unnest(?::type[])` casts for a
 * batch, and the row mapper — is generated from that one declaration, in its key order, so a
 * column cannot be bound in the wrong place or read with the wrong type, and the compiler names a
 * field that has no column.
 */
import type { JsonObject, JsonValue } from "../../domain/json.js";
import type { SqlDialect } from "./dialect.js";
import type { SqlParam, SqlRow } from "./executor.js";

/** PostgreSQL's type for the column (SQLite's affinity follows from the migration). */
type PgType = "text" | "int" | "bigint" | "jsonb" | "json" | "boolean";

export interface Column<T> {
  readonly name: string;
  readonly pg: PgType;
  encode(value: T): SqlParam;
  decode(value: unknown, dialect: SqlDialect, name: string): T;
}

/** A record type's columns: one per field, every field present (the compiler checks). */
export type Columns<R> = { readonly [K in keyof R]-?: Column<R[K]> };

export interface Table<R> {
  readonly name: string;
  readonly columns: Columns<R>;
  /** The fields in the declaration's order. */
  readonly fields: readonly (keyof R & string)[];
  /** Reads a driver row into the record: a function generated once per table ({@link rowReader}). */
  readonly read: (row: SqlRow, dialect: SqlDialect) => R;
}

function fail(name: string, expected: string, value: unknown): never {
  throw new Error(`column ${name}: expected ${expected}, got ${typeof value}`);
}

/** The JSON text both dialects bind for a JSON column. */
export function jsonParam(value: JsonValue | null | undefined): string | null {
  return value == null ? null : JSON.stringify(value);
}

export const col = {
  text<T extends string = string>(name: string): Column<T> {
    return {
      name,
      pg: "text",
      encode: (v) => v,
      decode: (v, _d, n) => (typeof v === "string" ? (v as T) : fail(n, "text", v)),
    };
  },
  optText<T extends string = string>(name: string): Column<T | null> {
    return {
      name,
      pg: "text",
      encode: (v) => v,
      decode: (v, _d, n) => (v == null ? null : typeof v === "string" ? (v as T) : fail(n, "text", v)),
    };
  },
  int(name: string, pg: "int" | "bigint" = "int"): Column<number> {
    return {
      name,
      pg,
      encode: (v) => v,
      decode: (v, _d, n) => (typeof v === "number" ? v : fail(n, "a number", v)),
    };
  },
  optInt(name: string, pg: "int" | "bigint" = "bigint"): Column<number | null> {
    return {
      name,
      pg,
      // `?? null`: an optional field a record built in code leaves out binds as NULL.
      encode: (v) => v ?? null,
      decode: (v, _d, n) => (v == null ? null : typeof v === "number" ? v : fail(n, "a number", v)),
    };
  },
  /** An instant in epoch milliseconds. */
  ms(name: string): Column<number> {
    return col.int(name, "bigint");
  },
  optMs(name: string): Column<number | null> {
    return col.optInt(name, "bigint");
  },
  /** A boolean: SQLite stores 0/1, PostgreSQL a boolean (which takes 0/1 as input). */
  bool(name: string): Column<boolean> {
    return { name, pg: "boolean", encode: (v) => (v ? 1 : 0), decode: (v) => Boolean(v) };
  },
  json<T extends JsonValue | null = JsonValue | null>(name: string): Column<T> {
    return {
      name,
      pg: "jsonb",
      encode: (v) => jsonParam(v),
      decode: (v, d) => (v == null ? null : d.readJson(v)) as T,
    };
  },
  /** A JSON column that reads back as `fallback` when NULL. */
  jsonOr<T extends JsonValue>(name: string, fallback: () => T): Column<T> {
    return {
      name,
      pg: "jsonb",
      encode: (v) => jsonParam(v),
      decode: (v, d) => (v == null ? fallback() : (d.readJson(v) as T)),
    };
  },
  /**
   * A JSON column that PostgreSQL stores as `JSON`, the text as written, so an object's keys read
   * back in the order given (an execution's input, result, events; docs/storage.md § JSON columns);
   * the others are `JSONB`, which reorders them. SQLite keeps the text either way.
   */
  asGiven<T>(column: Column<T>): Column<T> {
    return { ...column, pg: "json" };
  },
  jsonObject(name: string): Column<JsonObject> {
    return col.jsonOr<JsonObject>(name, () => ({}));
  },
  /**
   * {@link jsonObject} whose equal texts read back as one shared, frozen object, for the last
   * `size` distinct texts read (oldest first out). A schedule's stored settings are checked once
   * per object (src/scheduler/stored-settings.ts), so a row read again unchanged (a list the web UI
   * refreshes) costs neither the parse nor the check. Only where the driver gives the JSON as text
   * (SQLite; PostgreSQL's driver parses jsonb itself, so each row there is a new object).
   */
  internedJsonObject(name: string, size: number): Column<JsonObject> {
    const seen = new Map<string, JsonObject>();
    return {
      name,
      pg: "jsonb",
      encode: (v) => jsonParam(v),
      decode: (v, d) => {
        if (typeof v !== "string") return v == null ? {} : (d.readJson(v) as JsonObject);
        let value = seen.get(v);
        if (value === undefined) {
          value = deepFreeze(d.readJson(v)) as JsonObject;
          if (seen.size >= size) seen.delete(seen.keys().next().value as string);
          seen.set(v, value);
        }
        return value;
      },
    };
  },
};

/** Freezes a parsed JSON value and everything in it (a shared value must not be changed by one reader). */
function deepFreeze(value: unknown): unknown {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

export function table<R>(name: string, columns: Columns<R>): Table<R> {
  const fields = Object.keys(columns) as (keyof R & string)[];
  return { name, columns, fields, read: rowReader<R>(columns, fields) };
}

/**
 * The fire path reads, binds and maps thousands of rows a second, so the per-row work is not a
 * loop over the columns: each table's reader and each column set's parameter builders are
 * functions generated once, at module load, from the declaration — one object literal or array
 * literal with a fixed shape, one call per column to that column's own encoder or decoder (each
 * call site sees one function, which V8 inlines). Only names from the declarations go into the
 * generated code, and only as JSON string literals.
 */
function generate<F>(bound: Record<string, unknown>, body: string): F {
  const names = Object.keys(bound);
  return new Function(...names, body)(...names.map((n) => bound[n])) as F;
}

const lit = (text: string): string => JSON.stringify(text);

/** Extra fields a reader computes from the whole row (a schedule's outcome columns). */
export type ExtraReaders<X> = { readonly [K in keyof X]: (row: SqlRow, dialect: SqlDialect) => X[K] };

/**
 * The generated row reader of a table's columns: `{ field: decode(row.column), … }` in the
 * declaration's order, then the `extra` fields.
 */
export function rowReader<R, X = unknown>(
  columns: Columns<R>,
  fields: readonly (keyof R & string)[] = Object.keys(columns) as (keyof R & string)[],
  extra?: ExtraReaders<X>,
): (row: SqlRow, dialect: SqlDialect) => R & X {
  const bound: Record<string, unknown> = {};
  const props: string[] = [];
  fields.forEach((f, i) => {
    const c = columns[f] as Column<unknown>;
    bound[`d${i}`] = c.decode;
    props.push(`${lit(f)}: d${i}(row[${lit(c.name)}], dialect, ${lit(c.name)})`);
  });
  Object.entries(extra ?? {}).forEach(([k, read], i) => {
    bound[`x${i}`] = read;
    props.push(`${lit(k)}: x${i}(row, dialect)`);
  });
  return generate(bound, `return function readRow(row, dialect) { return { ${props.join(", ")} }; };`);
}

/** Makes a driver's array row (the statement's columns in order) an object keyed by column name. */
export type ArrayRowBuilder = (values: readonly unknown[]) => SqlRow;

/**
 * `(v) => ({ "a": v[0], "b": v[1] })` for a statement's column names, generated once per column
 * list: both drivers build object rows one property at a time, about twice as slow for the wide rows
 * of a poll, a batched complete or a fire batch (docs/benchmarks.md § End to end, Runs H and I).
 * Where two columns share a name the last one is kept, as the drivers' own object rows do. Names go
 * into the code only as JSON string literals.
 */
export function arrayRowBuilder(names: readonly string[]): ArrayRowBuilder {
  const last = new Map<string, number>();
  for (const [i, name] of names.entries()) last.set(name, i);
  const props = [...last].map(([name, i]) => `${lit(name)}: v[${i}]`);
  return generate({}, `return function row(v) { return { ${props.join(", ")} }; };`);
}

/** Array rows as objects, through `build`. */
export function objectRows(build: ArrayRowBuilder, rows: readonly (readonly unknown[])[]): SqlRow[] {
  const out = new Array<SqlRow>(rows.length);
  for (let i = 0; i < rows.length; i++) out[i] = build(rows[i] as readonly unknown[]);
  return out;
}

type Entry<R> = [keyof R & string, Column<unknown>];

function entries<R>(t: Table<R>, fields?: readonly (keyof R)[]): Entry<R>[] {
  const all = Object.entries(t.columns) as Entry<R>[];
  return fields === undefined ? all : fields.map((f) => all.find(([k]) => k === f) as Entry<R>);
}

/** A subset of a table's columns, in the order given (an UPDATE's SET list, a partial insert). */
export interface ColumnSet<R> {
  /** `a, b, "c"`: the names, quoted where they are SQL keywords. */
  readonly list: string;
  readonly names: readonly string[];
  /** `?, ?, ?`. */
  readonly marks: string;
  /** `a = ?, b = ?`. */
  readonly sets: string;
  /** The parameters of one record, in the columns' order. */
  params(row: R): SqlParam[];
  /** PostgreSQL: `?::text[], ?::bigint[]`, one array parameter per column. */
  readonly arrayMarks: string;
  /** PostgreSQL: `u.a, u.b::jsonb`: the unnested columns cast back to the column types. */
  readonly unnested: string;
  /** PostgreSQL: `a = u.a, b = u.b::jsonb`: an UPDATE … FROM unnest(…) AS u. */
  readonly setsFromUnnest: string;
  /** PostgreSQL: one array per column, for {@link arrayMarks}. */
  arrays(rows: readonly R[]): SqlParam[];
}

const KEYWORDS = new Set(["trigger", "key", "count"]);
export const quote = (name: string): string => (KEYWORDS.has(name) ? `"${name}"` : name);

/** Arrays of JSON go over the wire as text[] and are cast per element. */
const arrayType = (pg: PgType): string => (pg === "jsonb" || pg === "json" ? "text" : pg);

const unnested = (c: Column<unknown>): string =>
  `u.${quote(c.name)}${c.pg === "jsonb" || c.pg === "json" ? `::${c.pg}` : ""}`;

export function columnSet<R>(t: Table<R>, fields?: readonly (keyof R)[]): ColumnSet<R> {
  const cols = entries(t, fields);
  const names = cols.map(([, c]) => c.name);
  const bound: Record<string, unknown> = {};
  cols.forEach(([, c], i) => {
    bound[`e${i}`] = c.encode;
  });
  const encoded = (row: string) => cols.map(([k], i) => `e${i}(${row}[${lit(k)}])`);
  return {
    names,
    list: names.map(quote).join(", "),
    marks: names.map(() => "?").join(", "),
    sets: names.map((n) => `${quote(n)} = ?`).join(", "),
    params: generate(bound, `return function params(row) { return [${encoded("row").join(", ")}]; };`),
    arrayMarks: cols.map(([, c]) => `?::${arrayType(c.pg)}[]`).join(", "),
    unnested: cols.map(([, c]) => unnested(c)).join(", "),
    setsFromUnnest: cols.map(([, c]) => `${quote(c.name)} = ${unnested(c)}`).join(", "),
    // node-postgres binds a JS array as an array literal (each element quoted, null as NULL); the
    // executor's parameter type names scalars only, hence the cast. One pass over the rows.
    arrays: generate(
      bound,
      `return function arrays(rows) {
        const n = rows.length;
        ${cols.map((_, i) => `const a${i} = new Array(n);`).join(" ")}
        for (let i = 0; i < n; i++) {
          const r = rows[i];
          ${encoded("r")
            .map((e, i) => `a${i}[i] = ${e};`)
            .join(" ")}
        }
        return [${cols.map((_, i) => `a${i}`).join(", ")}];
      };`,
    ),
  };
}

/** Every field of a table but those named, in the table's order. */
export function fieldsExcept<R>(t: Table<R>, left: readonly (keyof R)[]): (keyof R)[] {
  return (Object.keys(t.columns) as (keyof R)[]).filter((k) => !left.includes(k));
}

/** One column of values as a PostgreSQL array parameter (e.g. for `= ANY(?::text[])`). */
export function arrayParam(values: readonly (string | number | null)[]): SqlParam {
  return values as unknown as SqlParam;
}

/** Reads a driver row into the record the table declares. */
export function readRow<R>(t: Table<R>, row: SqlRow, dialect: SqlDialect): R {
  return t.read(row, dialect);
}

/**
 * A batch insert: on PostgreSQL one statement whatever the batch's size (one array per column,
 * `unnest`ed into rows, so the statement text and its plan are the same for every batch); on
 * SQLite, where a statement is a function call and not a round trip, the single-row statement
 * once per row. `ordered` keeps the rows' order for a serial id; `tail` is e.g. `ON CONFLICT …`.
 * `derived` adds a column whose value SQL computes: `single` in the one-row form (its `?`s come
 * after the row's parameters), `unnested` in the batch form (over the unnested row `u`).
 */
export function batchInsertSql<R>(
  t: Table<R>,
  set: ColumnSet<R>,
  opts: { tail?: string; ordered?: boolean; derived?: { column: string; single: string; unnested: string } } = {},
): { single: string; unnest: string } {
  const tail = opts.tail ? ` ${opts.tail}` : "";
  const d = opts.derived;
  const list = d ? `${set.list}, ${d.column}` : set.list;
  const single = `INSERT INTO ${t.name} (${list}) VALUES (${set.marks}${d ? `, ${d.single}` : ""})${tail}`;
  const selected = d ? `${set.unnested}, ${d.unnested}` : set.unnested;
  const alias = set.names.map(quote).join(", ");
  const unnest = opts.ordered
    ? `INSERT INTO ${t.name} (${list}) SELECT ${selected} FROM unnest(${set.arrayMarks}) WITH ORDINALITY AS u(${alias}, ord) ORDER BY u.ord${tail}`
    : `INSERT INTO ${t.name} (${list}) SELECT ${selected} FROM unnest(${set.arrayMarks}) AS u(${alias})${tail}`;
  return { single, unnest };
}
