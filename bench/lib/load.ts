/** The machine's load average (1/5/15 min) as benches print it before and after their runs. */
import { loadavg } from "node:os";

export function loadAverage(): string {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");
}
