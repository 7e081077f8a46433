/**
 * `table[key]` when `key` is one of the table's own keys, else undefined. A lookup table written
 * as an object literal also answers `constructor`, `toString` and `__proto__` from its prototype:
 * `{"overlap": "constructor"}` was answered `did you mean "function Object() { [native code] }"?`
 * and `orbit toString` failed inside the CLI.
 */
export function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
