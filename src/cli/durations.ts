/**
 * Short human durations for the AGE column of `orbit ps` and the `elapsed:` line of `orbit status`:
 * `259ms`, `10.3s`, then `5m12s`, `3h04m`, `2d05h` (two units, the second zero-padded).
 */

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

export function shortDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms));
  if (total < 1000) return `${total}ms`;
  const tenths = Math.round(total / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  // 59.96s rounds to 60.0s above: it reads 1m00s, not 0m59s.
  const s = Math.max(60, Math.floor(total / 1000));
  if (s < 3600) return `${Math.floor(s / 60)}m${pad2(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad2(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad2(Math.floor((s % 86_400) / 3600))}h`;
}

/** Milliseconds between two API instants (RFC 3339); null when either is missing. */
export function between(from: string | null, to: string | null): number | null {
  if (from === null || to === null) return null;
  return Date.parse(to) - Date.parse(from);
}
