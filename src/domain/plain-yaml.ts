/**
 * YAML (or JSON) read strictly, for files people write: the apply file and the server's access
 * config. A warning is refused like an error: an unknown tag (`!!js/function`) would otherwise be
 * printed as a Node process warning and its value silently read as text. Repeated keys and more
 * than 100 aliases (a "billion laughs" file) are errors of the parser. The parser is loaded on the
 * first file read: every CLI command imports this module, and loading it cost each about 60 ms.
 */
import { createRequire } from "node:module";
import { numberAsWritten } from "./json-text.js";

type YamlModule = typeof import("yaml");
let yaml: YamlModule | null = null;

/**
 * The file's value; throws an Error whose message is the first problem, on one line.
 * `numbersAsWritten`: a number is kept with its text where JavaScript would write it otherwise
 * (`amount: 120.0` stays `120.0`, as in a JSON body; src/domain/json-text.ts), for values sent on
 * as JSON (an apply file's inputs).
 */
export function parsePlainYaml(text: string, options: { numbersAsWritten?: boolean } = {}): unknown {
  yaml ??= createRequire(import.meta.url)("yaml") as YamlModule;
  const y = yaml;
  const parsed = y.parseDocument(text);
  const problem = parsed.errors[0] ?? parsed.warnings[0];
  try {
    if (problem !== undefined) throw problem;
    if (options.numbersAsWritten === true) {
      y.visit(parsed, {
        Scalar(_key, node) {
          if (typeof node.value === "number" && node.source !== undefined) {
            node.value = numberAsWritten(node.value, node.source);
          }
        },
      });
    }
    return parsed.toJS();
  } catch (err) {
    const line = ((err as Error).message.split("\n")[0] ?? "").replace(/:$/, "");
    throw new Error(line);
  }
}
