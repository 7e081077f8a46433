/**
 * A TCP proxy between a worker and its server that can black-hole the traffic: every connection,
 * open or opened meanwhile, stays open and nothing is passed on either way (a network partition, a
 * firewall dropping packets) until `pass()`, when what was held flows on in order, as TCP does once
 * the network heals (the idea of test/faults/db-proxy.ts's stall, for HTTP).
 */
import { connect, createServer, type Server, type Socket } from "node:net";

export class BlackHole {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  /** While black-holed, what each connection received waits here, in order. */
  private held: (() => void)[] | null = null;
  private port = 0;

  constructor(private readonly target: URL) {}

  /** Listens; resolves with the proxy's base URL. */
  async start(): Promise<string> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => undefined);
      }
      client.on("data", (chunk: Buffer) => this.forward(upstream, chunk));
      upstream.on("data", (chunk: Buffer) => this.forward(client, chunk));
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
    return `http://127.0.0.1:${this.port}`;
  }

  /** Passes nothing on from now, either way; closes nothing. */
  blackHole(): void {
    this.held ??= [];
  }

  /** Passes on what was held, in order, and everything after it. */
  pass(): void {
    const held = this.held;
    this.held = null;
    for (const send of held ?? []) send();
  }

  async close(): Promise<void> {
    this.held = null;
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private forward(to: Socket, chunk: Buffer): void {
    if (this.held !== null) this.held.push(() => to.write(chunk));
    else to.write(chunk);
  }
}
