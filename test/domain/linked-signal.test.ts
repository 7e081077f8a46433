/**
 * linkedSignal (src/domain/linked-signal.ts): aborts with the first source that aborts, and once
 * released leaves nothing in its sources. Node 20's AbortSignal.any kept an entry per call in a
 * long-lived source (a server's closing signal grew by one per poll, for as long as it ran).
 */
import { getEventListeners } from "node:events";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { linkedSignal, withLinkedSignal } from "../../src/domain/linked-signal.js";

it("aborts with the reason of the first source that aborts, and unhooks from the others", () => {
  const a = new AbortController();
  const b = new AbortController();
  const linked = linkedSignal([a.signal, undefined, b.signal]);
  expect(linked.signal.aborted).toBe(false);
  b.abort("b went");
  expect(linked.signal.aborted).toBe(true);
  expect(linked.signal.reason).toBe("b went");
  expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
  a.abort("a went");
  expect(linked.signal.reason).toBe("b went");
});

it("is aborted at once by a source aborted already, listening to none", () => {
  const live = new AbortController();
  const done = new AbortController();
  done.abort("earlier");
  const linked = linkedSignal([live.signal, done.signal]);
  expect(linked.signal.reason).toBe("earlier");
  expect(getEventListeners(live.signal, "abort")).toHaveLength(0);
});

it("leaves nothing in a long-lived source once released, however often it is linked", async () => {
  const closing = new AbortController();
  for (let i = 0; i < 1000; i++) {
    await withLinkedSignal([closing.signal, new AbortController().signal], async (signal) => {
      expect(signal.aborted).toBe(false);
    });
  }
  expect(getEventListeners(closing.signal, "abort")).toHaveLength(0);
  // Released, a link no longer follows its source.
  const linked = linkedSignal([closing.signal]);
  linked.release();
  closing.abort();
  expect(linked.signal.aborted).toBe(false);
});

it("is what src/ uses: no AbortSignal.any, which keeps an entry per call in a long-lived source on Node 20", () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
    );
  const root = join(import.meta.dirname, "../../src");
  const calls = files(root).filter((f) => /AbortSignal\.any\(/.test(readFileSync(f, "utf8").replace(/\/\/.*$/gm, "")));
  expect(calls).toEqual([]);
});
