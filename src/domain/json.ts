/** JSON values as Orbit stores and returns them (inputs, results, schemas, event data). */
export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type NotJson = undefined | symbol | ((...args: never[]) => unknown);

/**
 * What a value of type T becomes through JSON (`JSON.parse(JSON.stringify(value))`): the type a
 * step returns, since a step returns its journaled JSON form even on its first run
 * (docs/workflows.md § Steps). A `Date` is a string, a `Map` or `Set` an empty object, functions
 * and `undefined` properties are gone and `undefined` in an array is `null`; `any` and `unknown`
 * stay as they are.
 */
export type Jsonified<T> = unknown extends T
  ? T
  : T extends { toJSON(...args: never[]): infer R }
    ? Jsonified<R>
    : T extends JsonPrimitive
      ? T
      : T extends NotJson | bigint
        ? never
        : T extends readonly (infer U)[]
          ? (U extends NotJson ? null : Jsonified<U>)[]
          : T extends ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> | WeakMap<object, unknown> | WeakSet<object>
            ? Record<never, never>
            : T extends object
              ? { [K in keyof T as K extends symbol ? never : T[K] extends NotJson ? never : K]: Jsonified<T[K]> }
              : never;
