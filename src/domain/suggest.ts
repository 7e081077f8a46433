/** "Did you mean" for unknown keys: the closest known key or alias by edit distance. */

export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] as number;
      prev[j] = Math.min(up + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] as number;
}

/**
 * The known key nearest `key` (case-insensitive), looking through `aliases` (other products' names
 * for the same setting, mapped to Orbit's) too; null when nothing is near enough to be a typo.
 */
export function suggestKey(
  key: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | null {
  const lower = key.toLowerCase();
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  const consider = (candidate: string, target: string): void => {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = target;
    }
  };
  for (const k of known) consider(k, k);
  for (const [alias, target] of Object.entries(aliases)) if (known.includes(target)) consider(alias, target);
  // Never more edits than the key has letters: "a" and "n" were "did you mean timezone?" (by "tz").
  const limit = Math.min(Math.max(2, Math.floor(lower.length / 3)), lower.length - 1);
  return bestDistance <= limit ? best : null;
}
