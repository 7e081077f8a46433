/**
 * A poll that got no answer may have been leased tasks all the same (the server committed, then the
 * answer was lost: a cut connection, a server killed after its commit, a 503 for a commit whose
 * reply never came). The next poll names the tasks this worker runs (`held`), and the server
 * answers again those leased to it that it does not name, instead of their waiting out the lease
 * (docs/workflows.md § Protocol). Refused outright (a 4xx), a poll leased nothing.
 */
import { OrbitError } from "../domain/errors.js";
import { MAX_TASK_IDS } from "../domain/worker-protocol.js";
import { refusesField } from "./protocol-client.js";

export class LostPolls {
  private lost = false;
  /** A server from before `held` refused it (an unknown key): not sent to it again. */
  private refused = false;

  /**
   * `instance`: the process id the polls carry (ProtocolClient.instance), null once a server from
   * before it refused it. Without one, `held` is not sent: the server would answer this process
   * every task leased to its worker id, those of another process sharing the id included (a
   * tester's two "billing" workers each ran the other's steps after a server restart).
   */
  constructor(private readonly instance: () => string | null) {}

  /** What the next poll's body adds: `held` after a poll that got no answer. */
  held(running: ReadonlyMap<string, unknown>): { held?: string[] } {
    if (!this.lost || this.refused || this.instance() === null || running.size > MAX_TASK_IDS) return {};
    return { held: [...running.keys()] };
  }

  /** A poll failed with `err`; `body` is what it sent. */
  failed(err: unknown, body: { held?: string[] }): void {
    if (body.held !== undefined && err instanceof OrbitError && err.code === "INVALID_ARGUMENT") {
      if (refusesField(err, "held")) this.refused = true;
      return;
    }
    if (err instanceof OrbitError && err.status < 500) return;
    this.lost = true;
  }

  /** A poll was answered: whatever it was handed, it got. */
  answered(): void {
    this.lost = false;
  }
}
