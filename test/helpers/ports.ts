/** Loopback ports for tests. */
import { createServer } from "node:net";

/** A loopback port nothing listens on now: a refused connection, or a server started on it later. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
