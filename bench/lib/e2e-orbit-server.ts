/** bench:e2e child: an Orbit server (`startServer`, as `orbit server` runs it) on loopback. */
import { startServer } from "../../src/server/server.js";
import { onStop, send, settings } from "./e2e-child.js";

const s = settings();
const server = await startServer({
  port: 0,
  logger: "warn",
  ...(s.target.startsWith("postgres")
    ? { database: s.target, ...(s.schema ? { databaseSchema: s.schema } : {}) }
    : {
        dataDir: s.target,
        ...(s.synchronous ? { sqliteSynchronous: s.synchronous } : {}),
        ...(s.sqliteCacheMb ? { sqliteCacheMb: s.sqliteCacheMb } : {}),
      }),
});
send({ type: "ready", url: server.url });
onStop(() => server.close());
