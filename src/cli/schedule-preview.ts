/**
 * `orbit schedule preview` (docs/design.md § Preview): the next N nominal occurrences of a timing, computed locally
 * with the same time engine the server uses, and no server.
 *
 * Output is streamed: lines are generated into chunks of about 64 KiB and each chunk awaits the
 * stream's backpressure, so `--count 1000000` needs neither a million-element array nor one giant
 * string.
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { OrbitError } from "../domain/errors.js";
import { describeTiming } from "../time/describe.js";
import { dstName } from "../time/dst.js";
import { formatInstant, parseInstant } from "../time/format.js";
import { type CompiledTiming, compileTiming, refuseBlankTiming, refuseLongTiming } from "../time/schedule-timing.js";
import { usageError } from "./args.js";
import type { CliIO, Writer } from "./io.js";
import { LocalTimeFormatter } from "./local-time.js";
import { oneLine } from "./safe-text.js";

/** Occurrences printed when `--count` is not given. */
export const DEFAULT_PREVIEW_COUNT = 5;
/** The largest `--count`. */
export const MAX_PREVIEW_COUNT = 1_000_000;
/** Output is handed to the stream in chunks of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

export interface PreviewOptions {
  cron?: string;
  interval?: string;
  timezone?: string;
  dst?: string;
  /** Epoch ms; occurrences strictly after it. Default: the clock. */
  from?: number;
  count: number;
  startAt?: string;
  endAt?: string;
  json?: boolean;
}

function parseCount(text: string): number {
  // One message for every wrong count (0 and -1 were told apart, "a number" and "a whole number").
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= 1 && n <= MAX_PREVIEW_COUNT)) {
    throw new InvalidArgumentError(`give a whole number from 1 to ${MAX_PREVIEW_COUNT}.`);
  }
  return n;
}

function parseFrom(text: string): number {
  try {
    return parseInstant(text, "--from");
  } catch (err) {
    if (err instanceof OrbitError) throw new InvalidArgumentError(`${err.message}.`);
    throw err;
  }
}

/** Adds `preview` to the `schedule` command group. */
export function addPreviewCommand(schedule: Command, io: CliIO): void {
  schedule
    .command("preview")
    .description("print the next occurrences of a cron expression or interval, computed locally (no server)")
    .addOption(new Option("--cron <expression>", "cron expression (5 fields, or 6 with seconds)").conflicts("interval"))
    .option("--interval <duration>", "interval such as 10s, 15m or 1h30m (units ms, s, m, h, d)")
    .option("--timezone <tz>", "IANA time zone of the cron expression (default: UTC)")
    .option("--dst <mode>", "DST mode: once, wall_clock or <gap>:<repeat> (default: once)")
    .option("--from <time>", "occurrences strictly after this RFC 3339 time (default: now)", parseFrom)
    .option("--count <n>", `how many occurrences, 1 to ${MAX_PREVIEW_COUNT}`, parseCount, DEFAULT_PREVIEW_COUNT)
    .option("--start-at <time>", "no occurrence before this RFC 3339 time (an interval's first occurrence)")
    .option("--end-at <time>", "no occurrence after this RFC 3339 time")
    .option("--json", 'print {"next_fire_times":[…]} instead of text')
    .configureHelp({ showGlobalOptions: false })
    .addHelpText(
      "after",
      `
Examples:
  $ orbit schedule preview --cron "0 2 * * *" --timezone Europe/Berlin
  $ orbit schedule preview --cron "30 2 * * *" --timezone Europe/Berlin --from 2026-03-28T00:00:00Z --count 3
  $ orbit schedule preview --interval 10s --count 3 --json`,
    )
    .action(async (opts: PreviewOptions, cmd: Command) => {
      if (opts.cron === undefined && opts.interval === undefined) {
        usageError(cmd, "give --cron <expression> or --interval <duration>");
      }
      // Blanks only: the trim's suggestion read `give ""` (a tester).
      for (const [flag, value] of [
        ["--cron", opts.cron],
        ["--interval", opts.interval],
      ] as const) {
        if (value !== undefined && value.trim() === "")
          usageError(
            cmd,
            `${flag} is empty: give the ${flag === "--cron" ? 'cron expression, such as "0 2 * * *"' : "interval, such as 10m"}`,
          );
      }
      let timing: PreviewTiming;
      try {
        timing = previewTiming(opts, io.now());
      } catch (err) {
        // No request is sent: a refused value is the command line's mistake (exit 2), in the words
        // the server would use (it exited 1, as if a server had refused it; docs/cli.md § Exit codes).
        if (err instanceof OrbitError) usageError(cmd, oneLine(err.message));
        throw err;
      }
      await preview(timing, opts, io);
    });
}

/** A timing checked and compiled, and the instants it is previewed between. */
interface PreviewTiming {
  compiled: CompiledTiming;
  from: number;
  startAt: number | null;
  endAt: number | null;
}

/** Checks and compiles the flags' timing, as the server would; throws OrbitError when it is refused. */
function previewTiming(opts: PreviewOptions, now: number): PreviewTiming {
  const from = opts.from ?? now;
  const startAt = opts.startAt === undefined ? null : parseInstant(opts.startAt, "start_at", "up");
  const endAt = opts.endAt === undefined ? null : parseInstant(opts.endAt, "end_at");
  refuseLongTiming({ cron: opts.cron, interval: opts.interval, timezone: opts.timezone, dst: opts.dst });
  refuseBlankTiming(opts.cron, opts.interval);
  const compiled = compileTiming(
    { cron: opts.cron, interval: opts.interval, timezone: opts.timezone, dst: opts.dst, startAt, endAt },
    from,
  );
  return { compiled, from, startAt, endAt };
}

/** Streams the occurrences of a compiled timing. */
async function preview(timing: PreviewTiming, opts: PreviewOptions, io: CliIO): Promise<void> {
  const { compiled, from, startAt, endAt } = timing;
  const out = new ChunkedOutput(io.stdout);
  if (opts.json === true) await writeJson(out, compiled, from, opts.count);
  else await writeText(out, compiled, opts, from, startAt, endAt);
  await out.flush();
}

/** Collects text; callers flush (awaiting backpressure) whenever a chunk is full. */
class ChunkedOutput {
  private buffer = "";
  constructor(private readonly writer: Writer) {}

  add(text: string): void {
    this.buffer += text;
  }

  get full(): boolean {
    return this.buffer.length >= CHUNK_CHARS;
  }

  async flush(): Promise<void> {
    if (this.buffer === "") return;
    const chunk = this.buffer;
    this.buffer = "";
    await this.writer.write(chunk);
  }
}

async function writeJson(out: ChunkedOutput, compiled: CompiledTiming, from: number, count: number): Promise<void> {
  out.add('{"next_fire_times":[');
  let t: number | null = from;
  for (let i = 0; i < count; i++) {
    t = compiled.timing.nextAfter(t);
    if (t === null) break;
    // formatInstant output is plain ASCII without quotes or backslashes: no escaping needed.
    out.add(i === 0 ? `"${formatInstant(t)}"` : `,"${formatInstant(t)}"`);
    if (out.full) await out.flush();
  }
  out.add("]}\n");
}

async function writeText(
  out: ChunkedOutput,
  compiled: CompiledTiming,
  opts: PreviewOptions,
  from: number,
  startAt: number | null,
  endAt: number | null,
): Promise<void> {
  const cron = compiled.cron;
  // The mode as given (`skip:both` stays `skip:both`, as the schedule keeps it), else its default.
  if (cron !== null)
    out.add(`cron "${cron.source}" ${compiled.zone.name} (dst: ${opts.dst ?? dstName(compiled.dst)})\n`);
  else out.add(`every ${(opts.interval ?? "").trim()}\n`);
  out.add(`${describeTiming(compiled, startAt, endAt)}\n`);
  const local = cron === null ? null : new LocalTimeFormatter(compiled.zone);
  let t: number | null = from;
  for (let i = 0; i < opts.count; i++) {
    t = compiled.timing.nextAfter(t);
    if (t === null) {
      out.add(endAt === null ? "(no more occurrences)\n" : `(no more occurrences: end_at ${formatInstant(endAt)})\n`);
      break;
    }
    out.add(local === null ? `  ${formatInstant(t)}\n` : `  ${formatInstant(t)}  ${local.format(t)}\n`);
    if (out.full) await out.flush();
  }
}
