/**
 * Test plumbing only: serves ui/ the way the server is asked to (docs/ui.md § Serving) and forwards
 * everything else to a running Orbit server, so the browser sees one origin.
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join } from "node:path";

export const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

export interface UiProxy {
  url: string;
  close(): Promise<void>;
}

async function serveFile(uiDir: string, name: string, res: ServerResponse): Promise<boolean> {
  const type = CONTENT_TYPES[extname(name)];
  if (type === undefined || !/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(name)) return false;
  let body: Buffer;
  try {
    body = await readFile(join(uiDir, name));
  } catch {
    return false;
  }
  res.writeHead(200, { "content-type": type, "cache-control": "no-cache", "x-content-type-options": "nosniff" });
  res.end(body);
  return true;
}

function forward(api: URL, req: IncomingMessage, res: ServerResponse): void {
  const upstream = request(
    { host: api.hostname, port: api.port, method: req.method, path: req.url, headers: req.headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on("error", (err) => {
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`proxy: ${err.message}`);
  });
  req.pipe(upstream);
}

export async function startUiProxy(uiDir: string, apiUrl: string): Promise<UiProxy> {
  const api = new URL(apiUrl);
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const isStatic = (req.method === "GET" || req.method === "HEAD") && !path.startsWith("/v1/");
    if (!isStatic) return forward(api, req, res);
    const name = path === "/" ? "index.html" : path.slice(1);
    serveFile(uiDir, name, res).then(
      (served) => {
        if (!served) forward(api, req, res);
      },
      (err: Error) => {
        res.writeHead(500);
        res.end(err.message);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
