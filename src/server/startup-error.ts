/**
 * A server that cannot start says what it could not use and why (docs/operations.md § Start-up):
 * `cannot listen on 127.0.0.1:7233: the address is already in use`, `cannot open the SQLite
 * database .orbit/orbit.db: …`, `cannot connect to PostgreSQL at postgres://orbit@db:5432/orbit: …`.
 * A refused option is one too, with the code INVALID_ARGUMENT (docs/operations.md § Embed):
 * `retention.maxAgeMs must be a whole number of milliseconds, got "30d" …`.
 * `orbit server` prints the message and exits 1.
 */
import { type ErrorCode, OrbitError } from "../domain/errors.js";

export class StartupError extends OrbitError {
  constructor(
    /**
     * The file, address or URL (without password) that could not be used; for a refused option,
     * the option as the caller wrote it (`dataDir`, `retention.maxAgeMs`, `ORBIT_DATABASE_URL`).
     */
    readonly target: string,
    message: string,
    /** `code`: INVALID_ARGUMENT for a refused option. Default INTERNAL. */
    options: { cause?: unknown; code?: ErrorCode } = {},
  ) {
    super(options.code ?? "INTERNAL", message, { target });
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/** A short reason: the system error's explanation when there is one, else the error's message. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException | null;
  const explained: Record<string, string> = {
    EADDRINUSE: "the address is already in use (another server, or another orbit server, listens there)",
    EACCES: "permission denied",
    EADDRNOTAVAIL: "no interface of this machine has that address",
    ECONNREFUSED: "connection refused (is the database running and listening there?)",
    ENOTFOUND: "the host name does not resolve",
    ETIMEDOUT: "the connection timed out",
    ENOENT: "no such file or directory",
    EISDIR: "it is a folder, not a file",
    EROFS: "the file system is read-only",
    SQLITE_BUSY:
      "database is locked (SQLITE_BUSY): another process held the file's lock for the 5 s the server waits (an `sqlite3` shell, a backup or copy tool); close it, or start again when it lets go",
  };
  const code = typeof e?.code === "string" ? e.code : undefined;
  if (code !== undefined && explained[code] !== undefined) return explained[code];
  const message = err instanceof Error ? err.message : String(err);
  // better-sqlite3's native driver missing: its message lists the thirteen paths it tried.
  if (message.startsWith("Could not locate the bindings file")) {
    return "the SQLite driver (better-sqlite3) is not built for this Node.js: wait for `npm install` to finish, or run `npm rebuild better-sqlite3`";
  }
  return code !== undefined && !message.includes(code) ? `${message} (${code})` : message;
}
