/**
 * `ctx.log` never fails the run (docs/workflows.md § ctx): a field the logger cannot write (a
 * BigInt, a cycle) is written as text, fields that are not an object go under `fields`, and a
 * logger that throws anyway loses the line, not the execution. Before, `ctx.log.info("x", {n: 1n})`
 * with the default logger failed the execution with "Do not know how to serialize a BigInt".
 */
import { expect, it } from "vitest";
import type { TaskJson } from "../../src/domain/worker-protocol.js";
import { jsonText, withTaskIds } from "../../src/worker/task-log.js";

const task = {
  task_id: "t1",
  execution_id: "x1",
  workflow: "W",
  version: "1.0.0",
  schedule_id: null,
} as unknown as TaskJson;
const IDS = { execution_id: "x1", workflow: "W@1.0.0", task_id: "t1" };

it("writes fields a JSON logger cannot take as text, and never throws", () => {
  const lines: string[] = [];
  // As a JSON-lines logger does (pino, the worker's console logger before).
  const strict = { info: (m: string, f?: object) => lines.push(`${m} ${JSON.stringify(f)}`), warn() {}, error() {} };
  const log = withTaskIds(strict, task);
  const cycle: Record<string, unknown> = { name: "c" };
  cycle.self = cycle;
  expect(() => log.info("big", { n: 10n })).not.toThrow();
  expect(() => log.info("cycle", cycle)).not.toThrow();
  log.info("text", "not an object" as never);
  log.info("plain", { ok: true });
  expect(lines).toEqual([
    `big ${JSON.stringify({ ...IDS, fields: '{"n":"10"}' })}`,
    `cycle ${JSON.stringify({ ...IDS, fields: '{"name":"c","self":"[Circular]"}' })}`,
    `text ${JSON.stringify({ ...IDS, fields: "not an object" })}`,
    `plain ${JSON.stringify({ ...IDS, ok: true })}`,
  ]);
  const throwing = withTaskIds(
    {
      info: () => {
        throw new Error("disk full");
      },
      warn() {},
      error() {},
    },
    task,
  );
  expect(() => throwing.info("lost", { a: 1 })).not.toThrow();
});

it("jsonText writes anything", () => {
  expect(jsonText({ n: 1n, d: new Date(0), u: undefined })).toBe('{"n":"1","d":"1970-01-01T00:00:00.000Z"}');
  expect(jsonText(undefined)).toBe("undefined");
  const bad = {
    toJSON() {
      throw new Error("no");
    },
  };
  expect(jsonText(bad)).toBe("[object Object]");
});

it("keeps the ids and the other fields when one of them is a revoked Proxy, and a Proxy message still logs", () => {
  const lines: string[] = [];
  const strict = { info: (m: string, f?: object) => lines.push(`${m} ${JSON.stringify(f)}`), warn() {}, error() {} };
  const log = withTaskIds(strict, task);
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  const unreadable = "[object that cannot be read: a revoked Proxy, or one whose traps throw]";
  log.info("a proxy field", { p: proxy, ok: 1 });
  log.info(proxy as never);
  log.info("proxy fields", proxy as never);
  expect(lines).toEqual([
    `a proxy field ${JSON.stringify({ ...IDS, fields: JSON.stringify({ p: unreadable, ok: 1 }) })}`,
    `${unreadable} ${JSON.stringify(IDS)}`,
    `proxy fields ${JSON.stringify({ ...IDS, fields: unreadable })}`,
  ]);
  expect(jsonText({ p: proxy, ok: 1 })).toBe(`{"p":"${unreadable}","ok":1}`);
});
