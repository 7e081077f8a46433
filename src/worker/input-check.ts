/**
 * The worker's own check of a task's input against its definition's input schema (docs/outcomes.md
 * § Input schema mismatch). The server validates every start against the schema it registered; a
 * worker whose definition of the same version carries another schema (registration answered 409)
 * would run its code on input it does not expect. The task fails instead, naming the mismatch.
 */
import {
  checkWithinBudget,
  compileInputSchema,
  describeSchemaErrors,
  type InputValidator,
} from "../domain/input-schema.js";
import type { JsonObject } from "../domain/json.js";
import type { TaskJson } from "../domain/worker-protocol.js";
import type { WorkflowDefinition } from "./workflow.js";

const validators = new WeakMap<WorkflowDefinition, InputValidator>();

/** The error of a task whose input the definition's schema refuses, or null when it matches. */
export function inputMismatch(def: WorkflowDefinition, task: TaskJson): { message: string; type: string } | null {
  if (def.input === undefined) return null;
  let validate = validators.get(def);
  if (validate === undefined) {
    try {
      validate = compileInputSchema(def.input as JsonObject, `${def.name}@${def.version}`);
    } catch (err) {
      return { type: "InputSchemaMismatch", message: (err as Error).message };
    }
    validators.set(def, validate);
  }
  // A copy: the schema's defaults are applied by the server, not here.
  try {
    if (checkWithinBudget(validate, structuredClone(task.input), `${def.name}@${def.version}`)) return null;
  } catch (err) {
    return { type: "InputSchemaMismatch", message: (err as Error).message };
  }
  return {
    type: "InputSchemaMismatch",
    message: `input does not match this worker's input schema of ${def.name}@${def.version}: ${describeSchemaErrors(validate.errors ?? [])} (the server holds another schema for this version; versions are immutable, so register a changed schema as a new version)`,
  };
}
