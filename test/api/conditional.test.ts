/**
 * Conditional reads (src/api/conditional.ts, docs/api.md § Conditional reads), and the OpenAPI
 * document's text made once: serialising and hashing its 158 KB on every request took 38 ms
 * under load, so a few connections pipelining it stalled the server (a tester).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { conditional, fixedBody } from "../../src/api/conditional.js";
import { startTestServer, type TestServer } from "./helpers.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

it("serialises a body marked fixed once, and any other body on every call", () => {
  const doc = fixedBody({ openapi: "3.1.0", paths: { "/x": {} } });
  const first = conditional(doc, undefined);
  expect(conditional(doc, undefined).text).toBe(first.text);
  expect(JSON.parse(first.text.toString())).toEqual(doc);
  const plain = { a: 1 };
  const once = conditional(plain, undefined);
  plain.a = 2;
  expect(JSON.parse(conditional(plain, undefined).text.toString())).toEqual({ a: 2 });
  expect(conditional(plain, [once.etag]).notModified).toBe(false);
  expect(conditional(doc, first.etag).notModified).toBe(true);
});

it("serves the OpenAPI document as JSON with one ETag, and 304 to a client that has it", async () => {
  const url = `${t.server.url}/v1/openapi.json`;
  const a = await fetch(url);
  const b = await fetch(url);
  expect(a.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(((await a.json()) as { openapi: string }).openapi).toBe("3.1.0");
  expect(await b.text()).toMatch(/^\{"openapi":"3\.1\.0"/);
  expect(b.headers.get("etag")).toBe(a.headers.get("etag"));
  const again = await fetch(url, { headers: { "if-none-match": a.headers.get("etag") ?? "" } });
  expect(again.status).toBe(304);
  expect(await again.text()).toBe("");
});
