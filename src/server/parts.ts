/**
 * What startServer started, closed in reverse (graphile-worker's "releasers"): each part registers
 * how to close itself the moment it exists, so a start-up that fails half-way closes exactly what it
 * had started, and close() after a full start stops firing first and closes the store last.
 */
import type { Logger } from "pino";

interface Part {
  name: string;
  close: () => Promise<void> | void;
}

export class StartedParts {
  private readonly parts: Part[] = [];
  private closing: Promise<void> | null = null;

  constructor(private readonly log: Logger) {}

  /** Registers a started part; it is closed before every part registered earlier. */
  add(name: string, close: () => Promise<void> | void): void {
    if (this.closing !== null) throw new Error(`cannot start ${name}: the server is closing`);
    this.parts.push({ name, close });
  }

  /**
   * Closes every part, last started first. A part that fails to close is logged and the rest still
   * close (the store, closed last, must never stay open because a listener failed). Idempotent.
   */
  closeAll(): Promise<void> {
    this.closing ??= (async () => {
      for (const part of this.parts.reverse()) {
        try {
          await part.close();
        } catch (err) {
          this.log.warn({ err, part: part.name }, `closing ${part.name} failed`);
        }
      }
    })();
    return this.closing;
  }
}
