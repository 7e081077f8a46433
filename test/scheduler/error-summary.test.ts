/** The error a schedule's last outcome shows (src/scheduler/outcomes.ts errorSummary). */
import { expect, it } from "vitest";
import { errorSummary } from "../../src/scheduler/outcomes.js";

it("summarizes a reported error as its message, type and step", () => {
  expect(errorSummary({ message: "card declined", type: "Error", step: "charge" })).toEqual({
    message: "card declined",
    type: "Error",
    step: "charge",
  });
  expect(errorSummary("boom")).toEqual({ message: "boom", type: null, step: null });
  expect(errorSummary(null)).toEqual({ message: null, type: null, step: null });
});

it("names the type when the message is empty, where the outcome read `error:` and nothing", () => {
  expect(errorSummary({ message: "", type: "TypeError", step: "charge" })).toEqual({
    message: "TypeError (thrown without a message)",
    type: "TypeError",
    step: "charge",
  });
  expect(errorSummary({ message: "  " })).toEqual({
    message: "Error (thrown without a message)",
    type: null,
    step: null,
  });
});
