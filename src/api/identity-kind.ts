/**
 * The refusals of a caller of the wrong kind (docs/security.md § Identities): a client identity on
 * the worker protocol, a worker identity on what only clients may do. One wording, whether the
 * request is refused before its body is read (app.ts) or by the route with the caller in hand.
 */
import { OrbitError } from "../domain/errors.js";

export function workerProtocolRefusal(name: string): OrbitError {
  return new OrbitError("PERMISSION_DENIED", `${name} is a client identity; /v1/worker needs a worker identity`);
}

export function clientOnlyRefusal(name: string): OrbitError {
  return new OrbitError(
    "PERMISSION_DENIED",
    `identity ${name} is a worker: workers use the worker protocol only, and may not manage schedules or executions`,
  );
}
