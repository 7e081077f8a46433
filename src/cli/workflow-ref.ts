/**
 * A workflow given as `Name@version`, the form `schedule list`, `schedule get` and `orbit workers`
 * print and `workflow register` takes: on `schedule create`, `schedule update` and `orbit start` it
 * is the workflow Name pinned to that version, exactly as `--workflow Name --version version`
 * (sent whole, the server looked for a workflow named `Name@version` and said it was not registered).
 */
import type { Command } from "commander";
import { usageError } from "./args.js";

/**
 * The name and version `given` (what `flag` received) names. `version` is the one `--version`
 * gave (null: `--unset version`); a version in `given` must agree with it, else a usage error.
 */
export function pinnedWorkflow<V extends string | null | undefined>(
  cmd: Command,
  flag: string,
  given: string,
  version: V,
): { workflow: string; version: string | V } {
  const at = given.indexOf("@");
  if (at < 0) return { workflow: given, version };
  const name = given.slice(0, at);
  const pin = given.slice(at + 1);
  if (name === "" || pin === "") {
    usageError(cmd, `${flag} ${given}: give the name and the version (Name@1.0.0), or the name alone`);
  }
  if (version === null) {
    usageError(cmd, `${flag} ${given} pins version ${pin} and --unset version clears it: give one of them`);
  }
  if (version !== undefined && version !== pin) {
    usageError(cmd, `${flag} ${given} pins version ${pin} but --version is ${version}: give one of them`);
  }
  return { workflow: name, version: pin };
}
