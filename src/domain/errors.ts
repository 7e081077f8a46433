/**
 * Orbit's error codes: one registry, mapped to HTTP statuses here and nowhere else.
 * Every refusal Orbit makes is an {@link OrbitError} with one of these codes and a message that
 * names the thing refused and, where there is one, the fix. docs/errors.md documents each code;
 * a test keeps the two in step.
 */
export const ERROR_CODES = {
  INVALID_ARGUMENT: 400,
  INVALID_SCHEDULE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class OrbitError extends Error {
  override readonly name = "OrbitError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Optional machine-readable detail (the offending field, the current revision …). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_CODES[this.code];
  }

  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code];
}

export const invalidSchedule = (message: string): OrbitError => new OrbitError("INVALID_SCHEDULE", message);
export const invalidArgument = (message: string): OrbitError => new OrbitError("INVALID_ARGUMENT", message);

/**
 * A failure that means this server could not reach its database (away, unwritable or stalled), so
 * it could not hear its workers either: it owes the leases a grace (src/engine/task-reaper.ts). Not
 * a transaction PostgreSQL aborted to let another go on (a deadlock, a serialization failure): the
 * next heartbeat lands.
 */
export function isOutage(err: unknown): boolean {
  return err instanceof OrbitError && err.code === "UNAVAILABLE" && err.details?.aborted !== true;
}
