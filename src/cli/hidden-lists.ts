/**
 * Why a list came back empty for an identity that may not see any of it. The server lists only the
 * schedules of workflows the caller may `schedule`, and the executions and workflows of those it may
 * `read` (docs/security.md), so for an identity without that action anywhere `orbit schedule list`
 * printed the header alone, exit 0, as for a server without schedules (a tester), where the web UI
 * says "Identity reader may not see schedules: listing them needs the schedule permission on a
 * workflow (it may read)." (ui/auth.js). The same words, from the same `GET /v1/me`.
 */
import type { Command } from "commander";
import type { OrbitClient } from "../client/client.js";
import { resolveConnection } from "./connection.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";

/** What a list shows, and the action an identity needs on a workflow to see its rows. */
export type HiddenList =
  | { what: "schedules"; action: "schedule" }
  | { what: "executions" | "workflows" | "workers"; action: "read" };

interface Grant {
  workflows?: unknown;
  actions?: unknown;
}

/**
 * The line to say when a list of `list.what` came back empty, or null when the identity may see
 * some (or the server is open, or does not say: an older server without /v1/me, an answer of
 * another shape). Asked only with a token: without one the server is open, or refused the list.
 */
export async function hiddenListNote(client: OrbitClient, list: HiddenList): Promise<string | null> {
  let me: { name?: unknown; kind?: unknown; allow?: unknown };
  try {
    me = (await client.me()) as typeof me;
  } catch {
    return null;
  }
  // A worker identity lists the executions and workflows it works on, without `read`.
  if (me.kind !== "client" || !Array.isArray(me.allow) || typeof me.name !== "string") return null;
  const grants = me.allow as Grant[];
  const actions = (g: Grant): string[] =>
    Array.isArray(g.actions) ? g.actions.filter((a): a is string => typeof a === "string") : [];
  if (grants.some((g) => actions(g).includes(list.action))) return null;
  const granted = [...new Set(grants.flatMap(actions))].join(", ") || "do nothing";
  return oneLine(
    `identity ${me.name} may not see ${list.what}: listing them needs the ${list.action} permission on a workflow (it may ${granted})`,
  );
}

/**
 * Says on stderr why the empty list `list.what` is empty, when a token was given and its identity
 * may not see any: one request, only for an empty list (stdout keeps the header alone). Returns
 * whether it said so.
 */
export async function sayHiddenList(cmd: Command, io: CliIO, client: OrbitClient, list: HiddenList): Promise<boolean> {
  if (resolveConnection(cmd, io).token === null) return false;
  const note = await hiddenListNote(client, list);
  if (note !== null) io.stderr.print(`${note}\n`);
  return note !== null;
}
