/** JSON values as Orbit stores and returns them (inputs, results, schemas, event data). */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

/**
 * A JSON value whose arrays and objects may be `readonly`: what a workflow's input type and a
 * continue-as-new input may be (a `readonly string[]` field was refused, TS2344). JSON values are
 * these too.
 */
export type ReadonlyJsonValue = JsonPrimitive | readonly ReadonlyJsonValue[] | ReadonlyJsonObject;
export interface ReadonlyJsonObject {
  readonly [key: string]: ReadonlyJsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What JSON has no form for: `null` where it stands alone or in an array, gone as a property. */
// biome-ignore lint/suspicious/noConfusingVoidType: a step of `async () => {}` resolves to void
type NotJson = undefined | void | symbol | ((...args: never[]) => unknown);

/** Keys JSON drops always (every value of them is {@link NotJson}) or sometimes (some are). */
type DroppedKeys<T> = { [K in keyof T]-?: [Exclude<T[K], NotJson>] extends [never] ? K : never }[keyof T];
type MaybeKeys<T> = { [K in keyof T]-?: [Extract<T[K], NotJson>] extends [never] ? never : K }[keyof T];
type Flat<T> = { [K in keyof T]: T[K] } & {};
type JsonifiedObject<T> = Flat<
  { [K in Exclude<keyof T, DroppedKeys<T> | MaybeKeys<T> | symbol>]: Jsonified<T[K]> } & {
    [K in Exclude<MaybeKeys<T>, DroppedKeys<T> | symbol>]?: Jsonified<Exclude<T[K], NotJson>>;
  }
>;

/**
 * What a value of type T becomes through JSON as a step journals it: the type a step returns, since
 * a step returns its journaled JSON form even on its first run (docs/workflows.md § Steps). A `Date`
 * is a string, a `Map` or `Set` an empty object, `undefined` (a step that returns nothing) is
 * `null`, a property that may be `undefined` is optional, tuples stay tuples; `any`, `unknown` and
 * JSON values stay as they are (the recursive JsonValue, a field of an undeclared input, made TypeScript
 * recurse without end: TS2589).
 */
export type Jsonified<T> = unknown extends T
  ? T
  : T extends JsonValue
    ? T extends JsonPrimitive | readonly unknown[]
      ? T
      : // An object with symbol keys passes for JSON (its string index says nothing of them): JSON drops them.
        [Extract<keyof T, symbol>] extends [never]
        ? T
        : JsonifiedObject<T>
    : T extends { toJSON(...args: never[]): infer R }
      ? Jsonified<R>
      : T extends NotJson
        ? null
        : T extends bigint
          ? never
          : T extends readonly unknown[]
            ? { -readonly [K in keyof T]: Jsonified<T[K]> }
            : T extends
                  | ReadonlyMap<unknown, unknown>
                  | ReadonlySet<unknown>
                  | WeakMap<object, unknown>
                  | WeakSet<object>
              ? Record<never, never>
              : T extends object
                ? JsonifiedObject<T>
                : never;
