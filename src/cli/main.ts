/**
 * The `orbit` command line (docs/cli.md). `run()` builds a fresh commander program per call, runs it and
 * turns the outcome into an exit code; it never calls `process.exit`, so tests run it in-process
 * with a memory CliIO.
 *
 * Exit codes: 0 success, 1 a refused request (an OrbitError, or a server that cannot be reached;
 * `orbit: <message>` on stderr), 2 bad usage (commander's parse errors and the commands' own usage
 * checks, on stderr).
 */

import { Command, CommanderError, type Option } from "commander";
import { ServerUnreachableError, unansweredWriteOf } from "../client/http.js";
import { OrbitError } from "../domain/errors.js";
import { own as ownEntry } from "../domain/own.js";
import { SCHEDULE_SETTINGS, SETTING_ALIASES } from "../domain/setting-table.js";
import { VERSION } from "../version.js";
import { refuseRepeatedOptions } from "./args.js";
import { registerBackupCommands } from "./backup.js";
import { addConnectionOptions } from "./connection.js";
import { registerDoctorCommand } from "./doctor.js";
import { registerExecutionCommands } from "./executions.js";
import { EXIT_OK, EXIT_REFUSED, EXIT_USAGE, ExitWith } from "./exit.js";
import { type CliIO, OutputClosedError, OutputFailedError, processIO } from "./io.js";
import { afterDashDashNote, literalOption, splitArgs, trackLiteralArgs } from "./literal-args.js";
import { registerOutcomeCommands } from "./outcomes.js";
import { oneLine } from "./safe-text.js";
import { registerScheduleCommands } from "./schedule.js";
import { registerServerCommand } from "./server.js";
import { registerVersionCommand } from "./version.js";
import { registerWorkflowCommands } from "./workflow.js";
import { maybeDoneText, notMadeText, refusedTries } from "./write-retry.js";

/** One registrar per command group, in the order `orbit --help` lists them. */
const COMMAND_GROUPS: ReadonlyArray<(program: Command, io: CliIO) => void> = [
  registerScheduleCommands,
  registerExecutionCommands,
  registerOutcomeCommands,
  registerWorkflowCommands,
  registerServerCommand,
  registerDoctorCommand,
  registerBackupCommands,
  registerVersionCommand,
];

/** The root command with every group registered; settings set here are inherited by subcommands. */
export function buildProgram(io: CliIO): Command {
  const program = new Command("orbit")
    .description("Orbit: a durable workflow server with exact, exactly-once schedules")
    .version(`orbit ${VERSION}`, "-V, --version", "print the orbit version")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.print(text),
      writeErr: (text) => io.stderr.print(text),
      // Commander's messages start with "error: "; Orbit's all start with "orbit: ". A flag's
      // refusal is commander's sentence and then Orbit's (`… is invalid. Give a whole number …`),
      // which starts with a capital like any sentence after a full stop.
      outputError: (text, write) =>
        write(
          shownUsageError(
            `orbit: ${text.replace(/^error: /, "").replace(/' is invalid\. ([a-z])/, (_, c: string) => `' is invalid. ${c.toUpperCase()}`)}`,
            [...(program as unknown as { rawArgs: string[] }).rawArgs, io.env.ORBIT_SERVER ?? ""],
          ),
        ),
    })
    .showHelpAfterError("(add --help for usage)")
    // Root options only before the command: `orbit workflow register --version 1.0.0` is the
    // workflow's version, not `orbit --version`. Commands that talk to a server repeat
    // --server/--token, so `orbit ps --server URL` works too.
    .enablePositionalOptions();
  addConnectionOptions(program);
  for (const register of COMMAND_GROUPS) register(program, io);
  // A group takes them too, between it and its command (`orbit schedule --server URL list`), as
  // the root and the commands do: it was refused as an unknown option.
  for (const group of program.commands) if (group.commands.length > 0) addConnectionOptions(group);
  trackLiteralArgs(program);
  suggestSynonyms(program);
  helpForCommandPaths(program);
  refuseRepeatedOptions(program);
  return program;
}

/** The most of one argument a usage error quotes, as the server cuts its messages. */
const MAX_QUOTED = 2000;

/**
 * A usage error as printed: the command line's own text it quotes (an unknown option, an invalid
 * value, --server or ORBIT_SERVER) inert and at most {@link MAX_QUOTED} characters, as the server's
 * text is shown. `$'--x\e]0;pwned\a'` retitled the terminal, and a 100 KB --input came back as a
 * 100 KB line (a tester). The quoted texts are found by what was given, so a newline inside one is
 * escaped while the message's own line breaks (`(Did you mean …?)`) stay.
 */
function shownUsageError(message: string, given: readonly string[]): string {
  const texts = new Set<string>();
  for (const arg of given) {
    // `--input=VALUE` is quoted as VALUE; an unknown `--x=VALUE` as `--x`.
    for (const part of [arg, ...(arg.startsWith("--") && arg.includes("=") ? [arg.slice(arg.indexOf("=") + 1)] : [])]) {
      if (part.length > MAX_QUOTED || oneLine(part) !== part) texts.add(part);
    }
  }
  let out = message;
  // Longest first: an argument may hold a shorter one.
  for (const text of [...texts].sort((a, b) => b.length - a.length)) {
    const cut =
      text.length > MAX_QUOTED
        ? `${text.slice(0, MAX_QUOTED)}… (${text.length - MAX_QUOTED} more characters cut)`
        : text;
    out = out.split(text).join(oneLine(cut));
  }
  // What else a message quotes (a JSON parser's reason) is made inert line by line.
  return out.split("\n").map(oneLine).join("\n");
}

/**
 * `orbit help schedule create` prints create's help: commander's help command reads one name
 * (`help [command]`) and printed the group's help for it, dropping `create`. A path that stops
 * naming commands gets the help of the last one it named, as before. A name that is no command of a
 * group is refused as `orbit <name>` would be, with its suggestion (`orbit help schedul`, `orbit
 * help schedule craete`: the first printed the root's help as an error, the second the group's help
 * as if asked); `orbit help --help` and `orbit help help` print the help, exit 0, as `--help` does.
 */
function helpForCommandPaths(command: Command): void {
  const own = command as unknown as { _dispatchHelpCommand(name?: string): unknown };
  own._dispatchHelpCommand = () => {
    // The operands, `help` first: commander set them as the args before dispatching.
    let target = command;
    for (const part of command.args.slice(1)) {
      if (part === "help" || part === "--help" || part === "-h") break;
      const sub = target.commands.find((c) => c.name() === part || c.aliases().includes(part));
      if (sub === undefined) {
        if (target.commands.length > 0) {
          // The group's unknown-command error, with its synonyms and spelling suggestion.
          const group = target as unknown as { args: string[]; unknownCommand(): void };
          group.args = [part];
          group.unknownCommand();
        }
        break;
      }
      target = sub;
    }
    return target.help();
  };
  for (const sub of command.commands) if (sub.commands.length > 0) helpForCommandPaths(sub);
}

/**
 * The settings' other names (SETTING_ALIASES, the API's "did you mean") written as flags, and each
 * setting's own name where its flag differs (`--labels` → `--label`), each to the setting's flag.
 */
function settingSynonyms(): Record<string, string> {
  const settings = SCHEDULE_SETTINGS as Readonly<Record<string, { flag?: { spec: string } }>>;
  const out: Record<string, string> = {};
  const names = [...Object.entries(SETTING_ALIASES), ...Object.keys(settings).map((key) => [key, key] as const)];
  for (const [name, key] of names) {
    if (/[A-Z]/.test(name)) continue; // a body key in camelCase is no flag's spelling
    const flag = settings[key]?.flag?.spec.split(" ")[0];
    const synonym = `--${name.replaceAll("_", "-")}`;
    if (flag !== undefined && flag !== synonym) out[synonym] = flag;
  }
  return out;
}

/**
 * Options other schedulers name differently, by their name there: commander's suggestion goes by
 * spelling alone, and for `--every 2s` it offered `--server`.
 */
export const SYNONYMS: Readonly<Record<string, string | readonly string[]>> = {
  "--every": "--interval",
  "--tz": "--timezone",
  "--zone": "--timezone",
  "--schedule": "--cron",
  "--args": "--input",
  "--payload": "--input",
  // A start's or schedule's input, or `orbit server`'s SQLite folder: the first the command has.
  "--data": ["--input", "--data-dir"],
  "--dir": "--data-dir",
  "--datadir": "--data-dir",
  "--data-directory": "--data-dir",
  "--sqlite": "--data-dir",
  "--from": "--start-at",
  "--to": "--end-at",
  "--until": "--end-at",
  // `-v` is most tools' version flag; commander's is `-V` (the root's only).
  "-v": "--version",
  // The API's other names for the settings, as flags (--misfire-policy → --catchup).
  ...settingSynonyms(),
  // `orbit server`'s PostgreSQL URL, by the names ORBIT_DATABASE_URL and other servers suggest.
  "--database-url": "--database",
  "--db": "--database",
  "--db-url": "--database",
  "--postgres": "--database",
  "--connection": "--database",
};

/**
 * Commands by the names other tools (and a first guess) give them: `orbit executions` and
 * `orbit execution list` are `orbit ps`; `orbit schedule ls` is `orbit schedule list`.
 */
const COMMAND_SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  execution: ["ps"],
  executions: ["ps"],
  runs: ["ps"],
  jobs: ["ps"],
  schedules: ["schedule"],
  workflows: ["workflow"],
  history: ["events", "occurrences"],
  logs: ["events", "occurrences"],
  describe: ["status", "get"],
  show: ["status", "get"],
  info: ["get"],
  status: ["get"],
  kill: ["cancel"],
  terminate: ["cancel"],
  rerun: ["retry"],
  ls: ["list"],
  rm: ["delete"],
  remove: ["delete"],
  edit: ["update"],
  unpause: ["resume"],
  run: ["trigger", "start"],
};

/**
 * Makes `command` and its subcommands suggest the {@link SYNONYMS} they have for an unknown
 * option, before commander's spelling-based suggestion; also when commander would first complain
 * that the required option the synonym stands for is missing (`backfill --from …`).
 */
function suggestSynonyms(command: Command): void {
  // commander's own error paths, each wrapped to try a synonym first.
  const own = command as unknown as {
    unknownCommand(): void;
    unknownOption(flag: string): void;
    missingMandatoryOptionValue(option: Option): void;
    missingArgument(name: string): void;
    _excessArguments(received: string[]): void;
  };
  const synonymError = (flag: string, only?: string): void => {
    const name = flag.split("=")[0]!;
    // `--id x` where the id is the command's argument (`orbit schedule create <schedule-id>`): said
    // first, also before a required option found missing (`orbit schedule create --id x` alone).
    const idArgument = command.registeredArguments.find((a) => a.name().endsWith("-id"));
    if (name === "--id" && idArgument !== undefined) {
      const group = command.parent?.parent ? `${command.parent.name()} ` : "";
      const usage = `orbit ${group}${command.name()} <${idArgument.name()}>`;
      const what = idArgument.name().replace(/-/g, " ");
      command.error(`error: unknown option '${flag}'\n(The ${what} is an argument: ${usage} …)`, {
        code: "commander.unknownOption",
      });
    }
    const synonyms = [ownEntry(SYNONYMS, name) ?? []].flat();
    const synonym = synonyms.find((s) => command.options.some((o) => o.long === s));
    if (synonym === undefined || (only !== undefined && synonym !== only)) return;
    command.error(`error: unknown option '${flag}'\n(Did you mean ${synonym}?)`, { code: "commander.unknownOption" });
  };
  const unknownCommand = own.unknownCommand.bind(command);
  own.unknownCommand = () => {
    const name = command.args[0] ?? "";
    // `orbit execution describe x`: the command the word after the noun names, where there is
    // one (`status`, `cancel`, `events`); `orbit execution list` and the noun alone are `ps`.
    const verb = command.args[1];
    if (command.parent === null && verb !== undefined && ownEntry(COMMAND_SYNONYMS, name)?.[0] === "ps") {
      // `get` of an execution is `status` (of a schedule or workflow it is their group's `get`).
      const said = [verb, ...(verb === "get" ? ["status"] : []), ...(ownEntry(COMMAND_SYNONYMS, verb) ?? [])];
      const meant = said.find((n) => n !== "ps" && command.commands.some((c) => c.name() === n));
      if (meant !== undefined) {
        command.error(`error: unknown command '${name}'\n(Did you mean orbit ${meant}?)`, {
          code: "commander.unknownCommand",
        });
      }
    }
    // The first synonym this command has: `orbit show x` is `orbit status x`, `orbit schedule show x`
    // is `orbit schedule get x`.
    const offered = ownEntry(COMMAND_SYNONYMS, name)?.find((n) => command.commands.some((c) => c.name() === n));
    if (offered !== undefined) {
      command.error(`error: unknown command '${name}'\n(Did you mean ${offered}?)`, {
        code: "commander.unknownCommand",
      });
    }
    // A group's command typed without its group: `orbit list` is `orbit schedule list` (or
    // `orbit workflow list`), `orbit trigger x` is `orbit schedule trigger x`.
    if (command.parent === null) {
      const inGroups = groupCommands(command, name);
      if (inGroups.length > 0) {
        command.error(`error: unknown command '${name}'\n(Did you mean ${inGroups.join(" or ")}?)`, {
          code: "commander.unknownCommand",
        });
      }
    }
    unknownCommand();
  };
  const spelling = own.unknownOption.bind(command);
  own.unknownOption = (flag: string) => {
    placementError(command, flag);
    synonymError(flag);
    spelling(flag);
  };
  // commander's spelling suggestion for an unknown option (`(Did you mean --cron?)`), as the error
  // it would raise, without raising it; undefined when it has none.
  const spellingError = (flag: string): string | undefined => {
    let said: string | undefined;
    const error = command.error.bind(command);
    command.error = ((message: string) => {
      said = message;
      throw new CommanderError(EXIT_USAGE, "commander.unknownOption", message);
    }) as typeof command.error;
    try {
      spelling(flag);
    } catch {
      // the error captured above
    } finally {
      command.error = error;
    }
    return said;
  };
  const missing = own.missingMandatoryOptionValue.bind(command);
  own.missingMandatoryOptionValue = (option: Option) => {
    // The unknown options are still among the command's args when the required ones are checked;
    // what came after `--` is arguments, whatever it looks like (literal-args.ts).
    const { given, literal } = splitArgs(command);
    for (const arg of given) if (arg.startsWith("--")) synonymError(arg, option.long);
    // A misspelling of the required option (`--workflw`): its suggestion, as an optional flag's
    // misspelling gets, rather than "required option '--workflow <name>' not specified".
    for (const arg of given) {
      if (!arg.startsWith("--")) continue;
      const said = spellingError(arg.split("=")[0]!);
      if (said?.endsWith(`(Did you mean ${option.long}?)`)) command.error(said, { code: "commander.unknownOption" });
    }
    // A missing argument before a missing option: commander checks options first, so `orbit
    // schedule create --cron …` without the id said --workflow was missing, not the id.
    const operands = given.filter((a) => !a.startsWith("-")).length + literal.length;
    const wanted = command.registeredArguments.filter((a) => a.required);
    const absent = wanted[operands];
    if (absent !== undefined) own.missingArgument(absent.name());
    // The option given, but after `--`: say so, where the message alone reads as a contradiction.
    const late = literal.find((a) => a.split("=")[0] === option.long) ?? literalOption(command, literal);
    if (late !== undefined) {
      command.error(`error: required option '${option.flags}' not specified\n${afterDashDashNote(late)}`, {
        code: "commander.missingMandatoryOptionValue",
      });
    }
    missing(option);
  };
  // Too many arguments because options came after `--` (`orbit schedule get -- x --json`): said.
  const excess = own._excessArguments.bind(command);
  own._excessArguments = (received: string[]) => {
    const late = literalOption(command, splitArgs(command).literal);
    if (late === undefined) return excess(received);
    const error = command.error.bind(command);
    command.error = ((message: string, opts?: { code?: string }) =>
      error(`${message}\n${afterDashDashNote(late)}`, opts)) as typeof command.error;
    try {
      excess(received);
    } finally {
      command.error = error;
    }
  };
  for (const sub of command.commands) suggestSynonyms(sub);
}

/**
 * An option the root or a group does not take, given before the command that takes it (`orbit
 * --json ps`): said where it goes, `--json goes after the command: orbit ps --json`. Root options
 * come before the command and a command's after it (enablePositionalOptions), and commander said
 * only "unknown option '--json'" (a tester).
 */
function placementError(command: Command, flag: string): void {
  if (command.commands.length === 0) return;
  const name = flag.split("=")[0]!;
  // commander puts everything from the unknown option on among the args: the command follows it.
  const after = command.args.slice(command.args.indexOf(flag) + 1);
  const path: Command[] = [];
  for (let at = command, i = 0; i < after.length && at.commands.length > 0; i++) {
    const sub = at.commands.find((c) => c.name() === after[i] || c.aliases().includes(after[i]!));
    if (sub === undefined) continue;
    path.push(sub);
    at = sub;
  }
  const target = path.at(-1);
  const option = target?.options.find((o) => o.long === name || o.short === name);
  if (target === undefined || option === undefined || target.commands.length > 0) return;
  const names: string[] = [];
  for (let c: Command | null = target; c !== null; c = c.parent) names.unshift(c.parent === null ? "orbit" : c.name());
  const given = option.required || option.optional ? option.flags.replace(/^-\w, /, "") : option.long;
  command.error(`error: unknown option '${flag}'\n(${name} goes after the command: ${names.join(" ")} ${given})`, {
    code: "commander.unknownOption",
  });
}

/** `orbit <group> <name>` for each group of `root` with a command `name` (or a synonym of it). */
function groupCommands(root: Command, name: string): string[] {
  const names = [name, ...(ownEntry(COMMAND_SYNONYMS, name) ?? [])];
  const found: string[] = [];
  for (const group of root.commands) {
    const sub = names.find((n) => group.commands.some((c) => c.name() === n));
    if (sub !== undefined) found.push(`orbit ${group.name()} ${sub}`);
  }
  return found;
}

/** Runs `orbit <argv…>` (argv without the node and script paths) and returns the exit code. */
export async function run(argv: readonly string[], io: CliIO = processIO()): Promise<number> {
  const program = buildProgram(io);
  let code: number;
  try {
    await program.parseAsync([...argv], { from: "user" });
    code = EXIT_OK;
  } catch (err) {
    code = exitCodeOf(err, io);
  }
  // A write error that came after the command's last write (its text was printed, not awaited):
  // the output is lost all the same, and a script reading it must not take exit 0 for success.
  const failed = await io.stdout.settled?.();
  if (failed !== undefined && code === EXIT_OK) {
    io.stderr.print(`orbit: ${failed.message}\n`);
    return EXIT_REFUSED;
  }
  return code;
}

function exitCodeOf(err: unknown, io: CliIO): number {
  if (err instanceof CommanderError) {
    // Help and --version "exit" with 0; everything else commander raises is a usage error, already
    // printed through outputError.
    return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  if (err instanceof ExitWith) return err.code;
  // The reader went away (`orbit … | head`): nothing left to say to it.
  if (err instanceof OutputClosedError) return EXIT_OK;
  if (err instanceof OutputFailedError) {
    io.stderr.print(`orbit: ${err.message}\n`);
    return EXIT_REFUSED;
  }
  if (err instanceof ServerUnreachableError && err.write !== null) {
    io.stderr.print(`orbit: ${oneLine(`${err.summary}; ${maybeDoneText(err.write)}`)}\n`);
    return EXIT_REFUSED;
  }
  // A write still answered 503 after the CLI repeated it with its key (write-retry.ts): the
  // database may have committed it and lost its answer, unless the server said of each try that
  // it refused it before writing anything (a deleted data folder, a server shutting down).
  const unavailable = unansweredWriteOf(err);
  if (unavailable !== null) {
    const refused = refusedTries(io, unavailable.idempotencyKey);
    const what = refused === null ? maybeDoneText(unavailable) : notMadeText(refused);
    io.stderr.print(`orbit: ${oneLine(`${(err as OrbitError).message}; ${what}`)}\n`);
    return EXIT_REFUSED;
  }
  if (err instanceof OrbitError || err instanceof ServerUnreachableError) {
    // The server's message may quote what it refused (a cron, a name): shown inert, on one line.
    io.stderr.print(`orbit: ${oneLine(err.message)}\n`);
    return EXIT_REFUSED;
  }
  if (err instanceof TypeError) {
    // What a command reads from an answer is not there: a server that is not Orbit, or not of this
    // version, answered 200 with JSON of another shape.
    io.stderr.print(
      `orbit: the server's answer is not what orbit ${VERSION} expects (${oneLine(err.message)}); is --server (or ORBIT_SERVER) an Orbit server of this version? \`orbit doctor\` checks\n`,
    );
    return EXIT_REFUSED;
  }
  const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
  io.stderr.print(`orbit: unexpected error: ${message}\n`);
  return EXIT_REFUSED;
}
