/** `orbit workflow register|list|deprecate|undeprecate`: the workflow versions schedules and executions start. */
import type { Command } from "commander";
import type { JsonObject } from "../domain/json.js";
import { checked, WORKFLOW_FIELDS } from "./answer-shape.js";
import { addWriteOptions, parseJsonObjectArg, printJson, usageError, type WriteFlags, writeOptionsOf } from "./args.js";
import { addConnectionOptions, clientFor } from "./connection.js";
import { workflowTable } from "./execution-format.js";
import { sayHiddenList } from "./hidden-lists.js";
import type { CliIO } from "./io.js";
import { oneLine } from "./safe-text.js";

interface RegisterFlags extends WriteFlags {
  name?: string;
  version?: string;
  inputSchema?: JsonObject;
  description?: string;
  json?: boolean;
}

export function registerWorkflowCommands(program: Command, io: CliIO): void {
  const workflow = program
    .command("workflow")
    .description("register, list and deprecate workflow versions")
    // Each command without "[options]": "undeprecate [options] <workflow> [version]" left the
    // descriptions under 40 columns, so commander stopped wrapping them at 80 (every other group wraps).
    .configureHelp({
      subcommandTerm: (cmd) =>
        [cmd.name(), ...cmd.registeredArguments.map((a) => (a.required ? `<${a.name()}>` : `[${a.name()}]`))].join(" "),
    });

  addWriteOptions(
    workflow
      .command("register")
      .description("register a workflow version (workers also register theirs when they start)")
      .argument("[workflow]", "the name, or name@version (the same as --name and --version)")
      .argument("[version]", "the version, as deprecate takes it (the same as --version)")
      .option("--name <name>", "workflow name, e.g. OrderProcessing")
      .option("--version <semver>", "semver version, e.g. 1.0.0")
      .option(
        "--input-schema <json>",
        "JSON Schema (draft 2020-12) of the input: JSON, @file, or @- for the standard input",
        parseJsonObjectArg,
      )
      .option("--description <text>", "free text")
      .option("--json", "print the server's JSON")
      .addHelpText(
        "after",
        `
Registering the same version again with the same schema is not an error (already registered);
with another schema it is refused.

Examples:
  $ orbit workflow register --name OrderProcessing --version 1.0.0 --input-schema @order.schema.json
  registered OrderProcessing@1.0.0
  $ orbit workflow register OrderProcessing@1.0.0`,
      ),
    false,
  ).action(async (given: string | undefined, givenVersion: string | undefined, opts: RegisterFlags, cmd: Command) => {
    const { name, version } = nameAndVersion(given, givenVersion, opts, cmd);
    const r = await clientFor(cmd, io).registerWorkflow(
      {
        name,
        version,
        ...(opts.inputSchema === undefined ? {} : { input_schema: opts.inputSchema }),
        ...(opts.description === undefined ? {} : { description: opts.description }),
      },
      writeOptionsOf(opts),
    );
    if (opts.json === true) return printJson(io, r.value);
    checked(r.value, "the workflow", WORKFLOW_FIELDS);
    const verb = r.created ? "registered" : "already registered";
    await io.stdout.write(`${oneLine(`${verb} ${r.value.name}@${r.value.version}`)}\n`);
  });

  workflow
    .command("list")
    .description("list every registered version, by name, highest version first")
    .option("--json", 'print the server\'s JSON ({"workflows":[…]})')
    .action(async (opts: { json?: boolean }, cmd: Command) => {
      const client = clientFor(cmd, io);
      const workflows = await client.listWorkflows();
      if (opts.json === true) return printJson(io, { workflows });
      for (const w of workflows) checked(w, "a workflow of the list", WORKFLOW_FIELDS);
      await io.stdout.write(workflowTable(workflows));
      if (workflows.length === 0) await sayHiddenList(cmd, io, client, { what: "workflows", action: "read" });
    });
  for (const action of ["deprecate", "undeprecate"] as const) {
    addWriteOptions(
      workflow
        .command(`${action} <workflow> [version]`)
        .description(
          action === "deprecate"
            ? 'deprecate a version: "latest" skips it (schedules and starts without a version); a pinned version still runs'
            : 'undeprecate a version: "latest" may start it again',
        )
        .option("--json", "print the server's JSON"),
      false,
    ).action(
      async (given: string, givenVersion: string | undefined, opts: WriteFlags & { json?: boolean }, cmd: Command) => {
        // `Name 1.0.0` or `Name@1.0.0`, as register takes it.
        const { name, version } = workflowArguments(given, givenVersion, cmd);
        if (version === undefined || version === "" || name === undefined || name === "") {
          usageError(cmd, `give the workflow and its version: orbit workflow ${action} Name 1.0.0 (or Name@1.0.0)`);
        }
        const w = await clientFor(cmd, io).deprecateWorkflow(
          name,
          version,
          action === "deprecate",
          writeOptionsOf(opts),
        );
        if (opts.json === true) return printJson(io, w);
        checked(w, "the workflow", WORKFLOW_FIELDS);
        await io.stdout.write(`${oneLine(`${action}d ${w.name}@${w.version}`)}\n`);
      },
    );
  }
  for (const command of workflow.commands) addConnectionOptions(command);
}

/**
 * `register`'s workflow: `--name`/`--version`, or the arguments `Name 1.0.0` (as deprecate takes
 * them), `Name@1.0.0` or `Name` with --version; two ways of giving one only when they agree.
 */
function nameAndVersion(
  given: string | undefined,
  givenVersion: string | undefined,
  opts: RegisterFlags,
  cmd: Command,
): { name: string; version: string } {
  const fromArg = workflowArguments(given, givenVersion, cmd);
  const pick = (what: "name" | "version"): string => {
    const a = fromArg[what];
    const o = opts[what];
    if (a !== undefined && o !== undefined && a !== o) {
      usageError(
        cmd,
        `the ${what} is ${JSON.stringify(a)} in <workflow> but ${JSON.stringify(o)} in --${what}: give one`,
      );
    }
    const value = a ?? o;
    if (value === undefined || value === "") {
      usageError(
        cmd,
        what === "name"
          ? "give the workflow: orbit workflow register OrderProcessing@1.0.0 (or --name and --version)"
          : `give the version: orbit workflow register ${fromArg.name ?? opts.name}@1.0.0 (or --version 1.0.0)`,
      );
    }
    return value;
  };
  return { name: pick("name"), version: pick("version") };
}

/**
 * The workflow as arguments: `Name@1.0.0`, or `Name` and an optional `1.0.0` after it (register,
 * deprecate, undeprecate); the two versions only when they agree.
 */
function workflowArguments(
  given: string | undefined,
  givenVersion: string | undefined,
  cmd: Command,
): { name?: string; version?: string } {
  const at = given?.lastIndexOf("@") ?? -1;
  const fromArg: { name?: string; version?: string } =
    given === undefined ? {} : at >= 0 ? { name: given.slice(0, at), version: given.slice(at + 1) } : { name: given };
  if (givenVersion !== undefined) {
    if (fromArg.version !== undefined && fromArg.version !== givenVersion) {
      usageError(
        cmd,
        `the version is ${JSON.stringify(fromArg.version)} in <workflow> but ${JSON.stringify(givenVersion)} after it: give one`,
      );
    }
    fromArg.version = givenVersion;
  }
  return fromArg;
}
