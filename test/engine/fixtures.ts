/** Shared fixtures of the engine suites. */
import type { OrbitError } from "../../src/domain/errors.js";

export const ORDER_SCHEMA = {
  type: "object",
  properties: {
    order_id: { type: "string" },
    amount: { type: "number" },
    currency: { type: "string", default: "EUR" },
    priority: { enum: ["low", "high"], default: "low" },
    email: { type: "string", format: "email" },
  },
  required: ["order_id", "amount"],
  additionalProperties: false,
};

/** Resolves to the OrbitError a promise rejects with (fails the test if it resolves). */
export async function refusal(promise: Promise<unknown>): Promise<OrbitError> {
  try {
    await promise;
  } catch (error) {
    return error as OrbitError;
  }
  throw new Error("expected a refusal, but the call succeeded");
}
