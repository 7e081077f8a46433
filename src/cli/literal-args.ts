/**
 * The arguments a command was given after `--`, which are arguments whatever they look like:
 * commander keeps them among the command's `args` without the `--`, so the usage errors that read
 * `args` for options (main.ts) took `orbit schedule create -- x9 --workflow W` for an unknown
 * `--workflow` and suggested `--workflow`, and `orbit schedule create -- -dash2` for a command
 * without its id (a tester).
 */
import type { Command } from "commander";

/** How many of each command's `args`, at their end, came after `--`. */
const LITERAL_COUNTS = new WeakMap<Command, number>();

/** Makes `command` and its subcommands remember which of their arguments came after `--`. */
export function trackLiteralArgs(command: Command): void {
  const own = command as unknown as { parseOptions(argv: string[]): { operands: string[]; unknown: string[] } };
  const parse = own.parseOptions.bind(command);
  own.parseOptions = (argv: string[]) => {
    const parsed = parse(argv);
    LITERAL_COUNTS.set(command, literalCount(argv, parsed.operands));
    return parsed;
  };
  for (const sub of command.commands) trackLiteralArgs(sub);
}

/**
 * How many of `operands`, at their end, follow a `--` of `argv`: the first `--` whose whole tail
 * ends the operands (a `--` that is an option's value, `--description --`, is followed by options).
 */
function literalCount(argv: readonly string[], operands: readonly string[]): number {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== "--") continue;
    const tail = argv.slice(i + 1);
    if (tail.length <= operands.length && tail.every((arg, k) => operands[operands.length - tail.length + k] === arg)) {
      return tail.length;
    }
  }
  return 0;
}

/**
 * `command`'s args split at `--`: `given` may hold options (commander's unknown ones), `literal`
 * are arguments. After an unknown option commander keeps the `--` itself among the args.
 */
export function splitArgs(command: Command): { given: string[]; literal: string[] } {
  const args = command.args;
  const counted = LITERAL_COUNTS.get(command) ?? 0;
  const before = args.slice(0, args.length - counted);
  const dashes = before.indexOf("--");
  if (dashes >= 0)
    return { given: before.slice(0, dashes), literal: [...before.slice(dashes + 1), ...args.slice(before.length)] };
  return { given: before, literal: args.slice(before.length) };
}

/** The first of `literal` that is an option `command` has (`--workflow`, `--workflow=W`), or undefined. */
export function literalOption(command: Command, literal: readonly string[]): string | undefined {
  return literal.find((arg) => {
    const name = arg.split("=")[0] ?? arg;
    return command.options.some((o) => o.long === name || o.short === name);
  });
}

/** The note a usage error adds when an option of the command was given after `--`. */
export function afterDashDashNote(option: string): string {
  return `(${option.split("=")[0]} comes after \`--\`, which makes everything after it an argument: give options before \`--\`)`;
}
