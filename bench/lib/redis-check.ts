/**
 * Whether Redis answers at a URL, within a few seconds. BullMQ's connections are built with
 * `maxRetriesPerRequest: null` (BullMQ requires it), so an unreachable Redis makes them retry for
 * ever; the benches ask this first and skip the BullMQ rows instead of hanging.
 */
import { connect } from "node:net";

/** null when Redis at `url` answers PING within `timeoutMs`; otherwise why not, in a few words. */
export function redisUnreachable(url: string, timeoutMs = 3000): Promise<string | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    let reply = "";
    const done = (why: string | null): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    socket.on("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk.toString();
      // +PONG, or an error such as -NOAUTH: either way a Redis server is there.
      if (reply.includes("\r\n")) done(/^[+-]/.test(reply) ? null : `unexpected reply ${JSON.stringify(reply)}`);
    });
    socket.on("error", (err) => done(err.message));
  });
}
