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
}

/** The reader of the output closed it (EPIPE): stop producing, quietly. */
export class OutputClosedError extends Error {
  override readonly name = "OutputClosedError";
  constructor() {
    super("output closed");
  }
}

/** A Writer over a Node writable stream that honours `write() === false` by awaiting 'drain'. */
export function streamWriter(stream: NodeJS.WritableStream): Writer {
  let closed = false;
  // A stream whose reader is gone emits 'error' (EPIPE) once; without a listener Node would crash.
  stream.on("error", () => {
    closed = true;
  });
  return {
    print(text) {
      if (!closed) stream.write(text);
    },
    write(text) {
      if (closed) return Promise.reject(new OutputClosedError());
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
        const onError = (): void => done(new OutputClosedError());
        const onClose = (): void => done(new OutputClosedError());
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
  };
}
