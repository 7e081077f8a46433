/**
 * Where the CLI writes and what it reads from its surroundings. Commands never touch
 * `process.stdout` or `process.env` themselves: `run()` receives a CliIO, so tests capture the output
 * in memory and set the environment and the clock without spawning a process.
 */

/** One output stream (stdout or stderr). */
export interface Writer {
  /**
   * Writes `text` and resolves once the stream can take more (backpressure): long outputs await each
   * chunk. Rejects with {@link OutputClosedError} when the reader went away (`orbit … | head`).
   */
  write(text: string): Promise<void>;
  /** Writes short text (help, messages) without waiting; the stream buffers it. */
  print(text: string): void;
  /**
   * Resolves once everything written so far reached the system, with the write error that lost some
   * of it (not a reader gone away): a `print` fails after the command has returned.
   */
  settled?(): Promise<OutputFailedError | undefined>;
}

export interface CliIO {
  readonly stdout: Writer;
  readonly stderr: Writer;
  /** The environment (ORBIT_SERVER, ORBIT_TOKEN …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The clock, in epoch ms (the default of `schedule preview --from`, the AGE of `orbit ps`). */
  now(): number;
  /** The fetch the client uses; default the global one (tests pass a fake server). */
  readonly fetch?: typeof fetch;
  /**
   * Waits `ms` (less once `signal` aborts) between the tries of a write the server answered 503
   * (src/cli/write-retry.ts); default a timer. Tests pass one that returns at once.
   */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Calls `listener` when the process is sent SIGINT (Ctrl-C) or SIGTERM, until the returned
   * function is called; the process then ends with 128 + the signal's number (130, 143), as a shell
   * reports one the signal ended. Used while a write is in flight (src/cli/connection.ts). Default:
   * none, and the signal ends the process as it would any program.
   */
  readonly onInterrupt?: (listener: (signal: InterruptSignal) => void) => () => void;
}

/** The signals that stop the CLI and that it answers while a write is in flight. */
export type InterruptSignal = "SIGINT" | "SIGTERM";

/** The reader of the output closed it (EPIPE): stop producing, quietly. */
export class OutputClosedError extends Error {
  override readonly name = "OutputClosedError";
  constructor() {
    super("output closed");
  }
}

/**
 * The output could not be written for another reason than a reader gone away: a full disk
 * (`> /dev/full`, ENOSPC), an I/O error. Unlike {@link OutputClosedError} the output the command
 * was asked for is lost, so it ends with exit 1 and says so.
 */
export class OutputFailedError extends Error {
  override readonly name = "OutputFailedError";
  constructor(readonly error: NodeJS.ErrnoException) {
    super(`cannot write the output: ${errnoText(error)}`);
  }
}

/** `no space left on device (ENOSPC)`: the system's reason, then its code. */
function errnoText(err: NodeJS.ErrnoException): string {
  // Node's message is `ENOSPC: no space left on device, write`; the reason is between the two.
  const reason = /^[A-Z0-9_]+: (.*?)(?:, \w+)?$/.exec(err.message)?.[1] ?? err.message;
  return err.code === undefined ? reason : `${reason} (${err.code})`;
}

/** A Writer over a Node writable stream that honours `write() === false` by awaiting 'drain'. */
export function streamWriter(stream: NodeJS.WritableStream): Writer {
  let closed = false;
  let failed: OutputFailedError | undefined;
  // A stream whose reader is gone emits 'error' (EPIPE) once; without a listener Node would crash.
  // Any other error lost output: every error once counted as a closed pipe, so `orbit version >
  // /dev/full` exited 0 having written nothing (a tester).
  const stopped = (err: unknown): Error => {
    const errno = err as NodeJS.ErrnoException | undefined;
    if (failed === undefined && errno?.code !== undefined && errno.code !== "EPIPE")
      failed = new OutputFailedError(errno);
    closed = true;
    return failed ?? new OutputClosedError();
  };
  stream.on("error", stopped);
  return {
    print(text) {
      if (!closed) stream.write(text);
    },
    settled() {
      if (closed) return Promise.resolve(failed);
      // An empty write's callback runs after the writes before it: by then their error was emitted.
      return new Promise((resolve) => {
        stream.write("", () => setImmediate(() => resolve(failed)));
      });
    },
    write(text) {
      if (closed) return Promise.reject(failed ?? new OutputClosedError());
      if (stream.write(text)) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const done = (err?: unknown): void => {
          stream.off("drain", onDrain);
          stream.off("error", onError);
          stream.off("close", onClose);
          if (err === undefined) resolve();
          else reject(err);
        };
        const onDrain = (): void => done();
        const onError = (err: unknown): void => done(stopped(err));
        const onClose = (): void => done(failed ?? new OutputClosedError());
        stream.on("drain", onDrain);
        stream.on("error", onError);
        stream.on("close", onClose);
      });
    },
  };
}

/** A Writer that keeps everything in memory, for tests. */
export interface MemoryWriter extends Writer {
  /** Everything written so far. */
  text(): string;
}

export function memoryWriter(): MemoryWriter {
  const chunks: string[] = [];
  return {
    print(text) {
      chunks.push(text);
    },
    write(text) {
      chunks.push(text);
      return Promise.resolve();
    },
    text() {
      return chunks.join("");
    },
  };
}

/** The real process: its stdout, stderr, environment and clock. */
export function processIO(): CliIO {
  return {
    stdout: streamWriter(process.stdout),
    stderr: streamWriter(process.stderr),
    env: process.env,
    now: () => Date.now(),
    onInterrupt: processInterrupts(),
  };
}

/**
 * {@link CliIO.onInterrupt} for the real process: the signal's listeners are installed while one
 * is registered, so at any other time SIGINT and SIGTERM end the process as usual.
 */
function processInterrupts(): NonNullable<CliIO["onInterrupt"]> {
  const listeners = new Set<(signal: InterruptSignal) => void>();
  let ending = false;
  const onSignal = (signal: InterruptSignal): void => {
    const code = 128 + (signal === "SIGINT" ? 2 : 15);
    // A second signal while stderr drains (a reader that does not read) ends it at once.
    if (ending) process.exit(code);
    ending = true;
    for (const listener of listeners) listener(signal);
    // Once what the listeners printed reached stderr (a pipe's write is asynchronous on some systems).
    process.stderr.write("", () => process.exit(code));
  };
  return (listener) => {
    if (listeners.size === 0) {
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    }
    listeners.add(listener);
    return () => {
      if (!listeners.delete(listener) || listeners.size > 0) return;
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    };
  };
}
