/**
 * What a worker reports of whatever a workflow throws (src/worker/errors.ts errorJson): the message
 * says what was thrown, and the report itself never fails.
 */
import { describe, expect, it } from "vitest";
import { errorJson, thrownText } from "../../src/worker/errors.js";

describe("errorJson: what a thrown value reports", () => {
  it.each([
    ["an Error", new TypeError("bad card"), { message: "bad card", type: "TypeError" }],
    ["a string", "plain string", { message: "plain string", type: "string" }],
    ["an object with a message", { message: "declined", code: 7 }, { message: "declined", type: "object" }],
    ["a plain object, as its JSON", { code: 42 }, { message: '{"code":42}', type: "object" }],
    ["an array", [1, "a"], { message: "1,a", type: "object" }],
    ["null", null, { message: "null", type: "object" }],
    ["a number", 404, { message: "404", type: "number" }],
  ])("%s", (_what, thrown, expected) => {
    expect(errorJson(thrown)).toEqual(expected);
  });

  it("describes an object whose JSON or message throws by its kind, and never throws itself", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(errorJson(circular)).toEqual({ message: "[object Object]", type: "object" });
    const hostile = {
      get message(): string {
        throw new Error("no");
      },
    };
    expect(errorJson(hostile)).toEqual({ message: "[object Object]", type: "object" });
    // String() throws (it has no toString): said as JSON like any plain object, not "[object Object]".
    const noText = Object.assign(Object.create(null) as object, { code: 42 });
    expect(errorJson(noText)).toEqual({ message: '{"code":42}', type: "object" });
  });

  it("follows an Error's causes, and says an AggregateError without a message by its errors", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    expect(errorJson(new TypeError("fetch failed", { cause: refused }))).toEqual({
      message: "fetch failed: connect ECONNREFUSED 127.0.0.1:9",
      type: "TypeError",
    });
    const both = new AggregateError([new Error("connect ECONNREFUSED ::1:9"), refused]);
    expect(errorJson(both)).toEqual({
      message: "connect ECONNREFUSED ::1:9; connect ECONNREFUSED 127.0.0.1:9",
      type: "AggregateError",
    });
    expect(errorJson(new Error("outer", { cause: "a code" })).message).toBe("outer: a code");
    const deep = new Error("1", {
      cause: new Error("2", { cause: new Error("3", { cause: new Error("4", { cause: new Error("5") }) }) }),
    });
    expect(errorJson(deep).message).toBe("1: 2: 3: 4");
  });

  it("reports an Error whose name or message getter throws", () => {
    class Hostile extends Error {
      override get name(): string {
        throw new Error("no name");
      }
    }
    expect(errorJson(new Hostile("said"))).toEqual({ message: "said", type: "[unreadable]" });
    expect(thrownText(Object.create(null))).toBe("{}");
    // Nor a cause or a message String() cannot convert.
    expect(errorJson(new Error("top", { cause: Object.create(null) })).message).toBe("top: {}");
    const odd = new Error("x");
    Object.defineProperty(odd, "message", { value: Object.create(null) });
    expect(errorJson(odd).message).toBe("[object Object]");
  });

  it("reports a revoked Proxy, or one whose traps throw, by its kind", () => {
    // An immer draft after its produce(): every instanceof, String() and toString threw again, so
    // the report failed and the run re-ran until its 20 leases were spent (a tester).
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const unreadable = "[object that cannot be read: a revoked Proxy, or one whose traps throw]";
    expect(errorJson(proxy)).toEqual({ message: unreadable, type: "object" });
    const trapped = new Proxy(
      {},
      {
        getPrototypeOf() {
          throw new Error("trap");
        },
        get() {
          throw new Error("trap");
        },
      },
    );
    expect(errorJson(trapped)).toEqual({ message: unreadable, type: "object" });
    expect(errorJson(new Error("wrapped", { cause: proxy }))).toEqual({
      message: `wrapped: ${unreadable}`,
      type: "Error",
    });
  });

  it("reports an AggregateError whose errors cannot be read, instead of throwing from its report", () => {
    const { proxy, revoke } = Proxy.revocable([] as unknown[], {});
    revoke();
    const revoked = Object.assign(new AggregateError([], ""), { errors: proxy });
    expect(errorJson(revoked)).toEqual({ message: "", type: "AggregateError" });
    const trapped = new Proxy([1], {
      get() {
        throw new Error("arr get");
      },
    });
    const withTrap = Object.assign(new AggregateError([], ""), { errors: trapped });
    expect(errorJson(withTrap)).toEqual({ message: "", type: "AggregateError" });
    expect(errorJson(Object.assign(new AggregateError([], "said"), { errors: proxy })).message).toBe("said");
  });

  it("says a cause once when the message already ends with it", () => {
    const inner = new Error("the card was declined");
    expect(errorJson(new Error(`charge failed: ${inner.message}`, { cause: inner })).message).toBe(
      "charge failed: the card was declined",
    );
    expect(errorJson(new Error("charge failed", { cause: inner })).message).toBe(
      "charge failed: the card was declined",
    );
    // Only a whole cause after ": ", not one that ends a word.
    expect(errorJson(new Error("failed: aboom", { cause: new Error("boom") })).message).toBe("failed: aboom: boom");
  });
});
