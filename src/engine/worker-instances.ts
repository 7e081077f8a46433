/**
 * Worker processes that share a `worker_id` (docs/workflows.md § `new Worker(options)`): each poll
 * of the SDK names its process (`instance`, a random id per Worker), and two processes polling
 * under one worker id share its leases: its heartbeats, its reports and its `GET /v1/workers` row
 * are one worker's. Nothing breaks since the redelivery after a lost poll answer is per process
 * (task-redeliver.ts), but the operator likely meant two workers (a tester's two "billing" processes
 * ran every step twice before that), so the server says so.
 */
/** At most one warning per worker id this often. */
export const SHARED_ID_WARN_EVERY_MS = 60_000;
/** The most worker ids tracked; past it the tracking starts over (a warning may come late, never wrongly). */
const MAX_TRACKED = 10_000;

interface Seen {
  first: number;
  last: number;
}

export class WorkerInstances {
  /** Per worker id, its processes seen within `liveMs`: when each first and last polled. */
  private readonly seen = new Map<string, Map<string, Seen>>();
  /** When each worker id was last warned about. */
  private readonly warned = new Map<string, number>();

  /** `liveMs`: how long after its last poll a process counts (workers.ts LIVE_WORKER_MS). */
  constructor(private readonly liveMs: number) {}

  /**
   * A poll of `workerId` from process `instance` at `now`: the warning to log, when another process
   * polls under the same id and this id was not warned about within the last minute; else null.
   * Another process counts when it polled since this one first did: a process that restarted under
   * a fixed id (its predecessor's last poll came before the new one's first) is not two processes.
   */
  polled(workerId: string, instance: string, now: number): string | null {
    let processes = this.seen.get(workerId);
    if (processes === undefined) {
      if (this.seen.size >= MAX_TRACKED) this.seen.clear();
      processes = new Map();
      this.seen.set(workerId, processes);
    }
    const mine = processes.get(instance) ?? { first: now, last: now };
    mine.last = now;
    processes.set(instance, mine);
    let other: string | null = null;
    for (const [id, s] of processes) {
      if (id === instance) continue;
      if (now - s.last > this.liveMs) processes.delete(id);
      else if (s.last > mine.first) other = id;
    }
    if (other === null) return null;
    const last = this.warned.get(workerId);
    if (last !== undefined && now - last < SHARED_ID_WARN_EVERY_MS) return null;
    if (this.warned.size >= MAX_TRACKED) this.warned.clear();
    this.warned.set(workerId, now);
    return (
      `two worker processes poll as worker_id "${workerId}" (instances ${other} and ${instance}): ` +
      "they share its leases, heartbeats and reports as one worker; give each process its own workerId " +
      "(the SDK's default, <host>:<pid>:<random>, is unique per process)"
    );
  }
}
