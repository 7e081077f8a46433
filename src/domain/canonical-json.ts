/**
 * JSON with every object's keys sorted (by UTF-16 code units), so that key order does not make two
 * values differ: two schemas of one version (engine/workflows.ts), an idempotent request's
 * fingerprint (api/idempotency.ts, hashed and stored: the text must not change), enum values and
 * array items as JSON Schema compares them (input-schema.ts). Keys are set as own properties, so a
 * `__proto__` key stays a key.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
