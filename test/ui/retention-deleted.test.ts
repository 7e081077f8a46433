/**
 * An occurrence whose execution retention deleted (docs/operations.md § Retention): its ledger row
 * carries no status (the API says the status of executions it still stores), and the day grid
 * draws it as neither run nor running, without a link to an execution page that would say "does
 * not exist". It was the running blue: a days-old occurrence looked as if it ran still (a tester).
 * ui/grid.js is plain JavaScript whose cells need no DOM, so they are read here directly.
 */
import { expect, it } from "vitest";
// @ts-expect-error plain JavaScript of the UI, without declarations
import { cellOf } from "../../ui/grid.js";

const started = (id: string) => ({ kind: "started", execution_id: id, occurrence: "2026-11-15T17:00:00Z" });

it("draws a started occurrence whose execution is gone as deleted, not as the running blue", () => {
  const statuses = new Map([["kept", "COMPLETED"]]);
  expect(cellOf(started("pruned"), statuses)).toEqual({
    cls: "cell status-deleted",
    label: "execution deleted (retention)",
  });
  expect(cellOf(started("kept"), statuses)).toEqual({ cls: "cell status-completed", label: "completed" });
  expect(cellOf(started("kept"), new Map([["kept", "RUNNING"]]))).toEqual({
    cls: "cell status-running",
    label: "running",
  });
});
