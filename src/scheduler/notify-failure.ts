/** Whether a schedule's alerts are failing, as its view shows it (docs/outcomes.md § Notifications). */
import type { JsonObject } from "../domain/json.js";
import type { NotificationRow } from "../store/outcome-store.js";
import { formatInstant } from "../time/format.js";

/** How many of a schedule's newest webhook deliveries a read looks at for {@link notifyFailure} (as the list shows). */
export const NOTIFICATIONS_READ = 100;

/**
 * The schedule's alerts are failing: for one of its webhook URLs (of `current`, the ones it still
 * calls, when given), the newest delivery that was tried
 * failed for good or is being retried after an error (docs/outcomes.md § Notifications). Null when
 * each URL's newest tried delivery landed (an older failure is history: the channel works), or none
 * was tried.
 */
export function notifyFailure(
  newestFirst: readonly NotificationRow[],
  current: ReadonlySet<string> | null = null,
): JsonObject | null {
  const seen = new Set<string>();
  let tried: NotificationRow | undefined;
  for (const n of newestFirst) {
    if (n.attempts === 0 || seen.has(n.url) || (current !== null && !current.has(n.url))) continue;
    seen.add(n.url);
    if (n.state !== "delivered" && n.lastError !== null) {
      tried = n;
      break;
    }
  }
  if (tried === undefined) return null;
  return {
    event: tried.event,
    url: tried.url,
    state: tried.state === "failed" ? "failed" : "retrying",
    attempts: tried.attempts,
    error: tried.lastError,
    created_at: formatInstant(tried.createdMs),
  };
}
