/** Percentiles, memory readings and plain-text tables for the firing benchmark. */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** The p-th percentile (0-100) by nearest rank; NaN for no samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export interface LagSummary {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export function summarise(values: readonly number[]): LagSummary {
  const sorted = Float64Array.from(values).sort();
  return {
    samples: sorted.length,
    p50: percentile(Array.from(sorted), 50),
    p99: percentile(Array.from(sorted), 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Process memory after a full GC, in MB. */
export function memory(): { rssMb: number; heapMb: number } {
  gc();
  const m = process.memoryUsage();
  return { rssMb: m.rss / 2 ** 20, heapMb: m.heapUsed / 2 ** 20 };
}

export const int = (n: number): string => Math.round(n).toLocaleString("en-US");
export const ms = (n: number): string => (Number.isNaN(n) ? "-" : n.toFixed(n < 10 ? 1 : 0));

/** A table with the first `left` columns left-aligned and the rest right-aligned. */
export function table(header: string[], rows: string[][], left = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
