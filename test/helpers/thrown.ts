/** The OrbitError a synchronous call throws, for tests of refusals; fails the test when it returns. */
import { expect } from "vitest";
import { OrbitError } from "../../src/domain/errors.js";

export function thrown(fn: () => unknown): OrbitError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(OrbitError);
    return e as OrbitError;
  }
  throw new Error("expected a refusal");
}
