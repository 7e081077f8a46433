/**
 * The web UI (docs/design.md § Parts: at `/`): the static files of the package's `ui/` folder, no build step.
 * `/` is ui/index.html; `/<name>` a file directly in ui/ (no sub-folders, no listing). The UI calls
 * the API from the browser; it routes with `#/…`, so the server needs no fallback.
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyReply } from "fastify";

/** ui/ beside src/ and dist/ (this file is src/api/ui-static.ts or dist/api/ui-static.js). */
const UI_DIR = fileURLToPath(new URL("../../ui/", import.meta.url));
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;
const TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
};

/**
 * The UI's pages may not be framed (clickjacking), load or send data to other origins, or leak the
 * URL in a Referer (docs/security.md § Browsers). The UI is plain modules and a stylesheet from
 * its own origin, which this policy allows.
 */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

export function registerUi(app: FastifyInstance, dir: string = UI_DIR): void {
  const serve = async (name: string, reply: FastifyReply): Promise<unknown> => {
    const type = TYPES[name.slice(name.lastIndexOf(".") + 1)];
    if (!NAME.test(name) || type === undefined) return reply.callNotFound();
    let body: Buffer;
    try {
      body = await readFile(`${dir}${name}`);
    } catch {
      return reply.callNotFound();
    }
    return reply.type(type).header("cache-control", "no-cache").headers(UI_SECURITY_HEADERS).send(body);
  };
  app.get("/", (_request, reply) => serve("index.html", reply));
  app.get<{ Params: { name: string } }>("/:name", (request, reply) => serve(request.params.name, reply));
}
