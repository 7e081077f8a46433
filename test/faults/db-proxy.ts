/**
 * A TCP proxy between a test's server and PostgreSQL that can be taken down and brought back: the
 * server sees exactly what a database restart or failover looks like (connections reset, new ones
 * refused, then accepted again) while the shared PostgreSQL other suites use is left alone. It can
 * also stall: keep every connection open and accept new ones, but forward nothing either way and
 * reset nothing (a partition, a frozen database host, a firewall dropping packets), until resumed.
 */
import { connect, createServer, type Server, type Socket } from "node:net";

/** What PostgreSQL sends a backend that pg_terminate_backend ended: ErrorResponse, FATAL 57P01. */
function terminatedMessage(): Buffer {
  const fields = Buffer.concat(
    [
      ["S", "FATAL"],
      ["V", "FATAL"],
      ["C", "57P01"],
      ["M", "terminating connection due to administrator command"],
    ].map(([code, text]) => Buffer.from(`${code}${text}\0`)),
  );
  const head = Buffer.alloc(5);
  head.write("E", 0);
  head.writeInt32BE(4 + fields.length + 1, 1);
  return Buffer.concat([head, fields, Buffer.from([0])]);
}

/** The simple-protocol queries pg sends for a transaction's ends: 'Q', length, text, NUL. */
const BEGIN = Buffer.from("BEGIN\0");
const COMMIT = Buffer.from("COMMIT\0");

export class DbProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;
  /**
   * When set, every new connection is terminated the moment it is ready: the database's first
   * ReadyForQuery and a FATAL 57P01 reach the client in one write, then the connection closes, as
   * when pg_terminate_backend hits a backend that just started (the client parses both in one read).
   */
  terminateWhenReady = false;
  /** While stalled, what each connection received waits here, in order, to be passed on at resume(). */
  private held: (() => void)[] | null = null;
  /** When set, the COMMIT it names is passed on, and then the proxy stalls (see stallAfterCommit). */
  private stallAt: { marker: Buffer; reached: () => void } | null = null;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts listening (again, on the same port once it had one). */
  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      let marked = false; // this connection's transaction sent the marker
      client.on("data", (chunk: Buffer) => {
        this.forward(upstream, chunk);
        const at = this.stallAt;
        if (at === null) return;
        if (chunk.includes(BEGIN)) marked = false;
        if (chunk.includes(at.marker)) marked = true;
        if (marked && chunk.includes(COMMIT)) {
          this.stallAt = null;
          this.stall();
          at.reached();
        }
      });
      if (this.terminateWhenReady) upstream.on("data", terminateAtReady(client, upstream));
      else upstream.on("data", (chunk: Buffer) => this.forward(client, chunk));
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => resolve());
    });
    const address = server.address();
    if (typeof address === "object" && address !== null) this.port = address.port;
    this.server = server;
  }

  /** Resets every open connection and refuses new ones, as a database that went away. */
  async down(): Promise<void> {
    this.held = null;
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.resetAndDestroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Stops passing anything on, either way, on every connection open or opened later; closes nothing. */
  stall(): void {
    this.held ??= [];
  }

  /** How many chunks the stall holds back so far: more than 0 once a statement waits on it. */
  get holding(): number {
    return this.held?.length ?? 0;
  }

  /**
   * Stalls right after the COMMIT of the first transaction that sent `marker` (a parameter of one
   * of its statements, e.g. a schedule id): the database commits, its answer never reaches the
   * client. Resolves when that happened.
   */
  stallAfterCommit(marker: string): Promise<void> {
    return new Promise((reached) => {
      this.stallAt = { marker: Buffer.from(marker), reached };
    });
  }

  /** Ends a stall: what was held is passed on, in order, and traffic flows again. */
  resume(): void {
    const held = this.held;
    this.held = null;
    for (const pass of held ?? []) pass();
  }

  private forward(to: Socket, chunk: Buffer): void {
    if (this.held !== null) this.held.push(() => to.write(chunk));
    else to.write(chunk);
  }

  /** `url` with its host and port replaced by the proxy's. */
  url(url: string): string {
    const u = new URL(url);
    u.hostname = "127.0.0.1";
    u.port = String(this.port);
    return u.toString();
  }
}

/**
 * Passes the database's messages (type byte, int32 length) on to `client` until the first
 * ReadyForQuery ('Z'), which it sends in one write with a FATAL 57P01; then closes both sides.
 */
function terminateAtReady(client: Socket, upstream: Socket): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  let done = false;
  return (chunk) => {
    if (done) return;
    pending = Buffer.concat([pending, chunk]);
    let at = 0;
    while (pending.length >= at + 5) {
      const end = at + 1 + pending.readInt32BE(at + 1);
      if (pending.length < end) break;
      if (pending[at] === "Z".charCodeAt(0)) {
        done = true;
        client.end(Buffer.concat([pending.subarray(0, end), terminatedMessage()]), () => upstream.destroy());
        return;
      }
      at = end;
    }
  };
}
