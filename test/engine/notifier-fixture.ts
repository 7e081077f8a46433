/** One webhook notification stored and one delivery pass run by hand, for the notifier's tests. */
import { ManualClock } from "../../src/clock/manual-clock.js";
import type { JsonObject } from "../../src/domain/json.js";
import { Notifier } from "../../src/engine/notifier.js";
import type { Store } from "../../src/store/store.js";

/** Stores a failure notification of schedule "nightly" to `url`, runs one pass; returns its log lines. */
export async function deliverOnce(
  store: Store,
  url: string,
  payload: JsonObject,
): Promise<Array<Record<string, unknown>>> {
  const clock = new ManualClock(Date.UTC(2026, 10, 15, 19, 0, 0));
  const lines: Array<Record<string, unknown>> = [];
  const log = {
    warn: (obj: object, msg: string) => lines.push({ ...obj, msg }),
    error: (obj: object, msg: string) => lines.push({ ...obj, msg }),
  };
  await store.insertNotifications(
    [{ scheduleId: "nightly", workflow: "Report", event: "failure", url, payload, createdMs: clock.now() }],
    clock.now(),
  );
  const notifier = new Notifier({ store, clock, secret: null, log });
  try {
    if ((await notifier.deliverDue()) !== 1) throw new Error("the pass did not deliver the one notification");
  } finally {
    await notifier.close();
  }
  return lines;
}
