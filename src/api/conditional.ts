/**
 * Conditional reads for the list routes (docs/api.md § Conditional reads): a GET answer carries a weak
 * `ETag` of its JSON text, and a request whose `If-None-Match` names it gets `304 Not Modified`
 * with no body. The web UI refreshes every few seconds; when nothing changed, a refresh costs a
 * few hundred bytes instead of the page again. The server still builds the answer: this saves the
 * network and the browser's work, not the database read.
 */
import { createHash } from "node:crypto";
import { serializeJson } from "../domain/json-text.js";

export interface Conditional {
  /** The serialised body to send, its ETag, and whether the client already has it. */
  text: string;
  etag: string;
  notModified: boolean;
}

export function conditional(body: unknown, ifNoneMatch: string | string[] | undefined): Conditional {
  const text = serializeJson(body);
  const etag = `W/"${createHash("sha1").update(text).digest("base64url")}"`;
  const wanted = [ifNoneMatch ?? []]
    .flat()
    .flatMap((h) => h.split(","))
    .map((t) => t.trim());
  return { text, etag, notModified: wanted.includes(etag) || wanted.includes(etag.slice(2)) || wanted.includes("*") };
}
