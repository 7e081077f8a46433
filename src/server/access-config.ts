/**
 * Access control (docs/design.md § Access control): the identities file named by `--config`,
 * bearer-token authentication and the per-workflow action checks the routes ask for. Validated once at start, then frozen.
 *
 * ```yaml
 * identities:
 *   - name: ci
 *     token_sha256: 9f86d08…   # sha256 of the token, hex
 *     kind: client             # or worker
 *     allow:
 *       - workflows: "Order*"  # glob (* and ?), or a list of globs
 *         actions: [schedule, start, read, cancel]
 *     concurrency_keys: "orders-*"  # optional: the only concurrency keys its schedules may use
 * ```
 */

import { createHash } from "node:crypto";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { AccessControl, Action } from "../api/deps.js";
import { clientOnlyRefusal } from "../api/identity-kind.js";
import type { ApiRequest, Caller } from "../api/route.js";
import { compileRequestSchema, describeValidationError } from "../api/validation.js";
import { OrbitError } from "../domain/errors.js";
import { parsePlainYaml } from "../domain/plain-yaml.js";
import { FileTooLarge, readCapped } from "../domain/read-capped.js";
import { reasonOf } from "./startup-error.js";

const ACTIONS = ["schedule", "start", "read", "cancel"] as const;

/** One of `values`, as an `enum`: a wrong value is told the allowed ones ("must be equal to constant" before). */
const oneOf = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: "string", enum: [...values] });

const ConfigSchema = Type.Object(
  {
    identities: Type.Array(
      Type.Object(
        {
          name: Type.String({ minLength: 1 }),
          token_sha256: Type.String({ pattern: "^[0-9a-fA-F]{64}$" }),
          kind: oneOf(["client", "worker"] as const),
          concurrency_keys: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
          allow: Type.Optional(
            Type.Array(
              Type.Object(
                {
                  workflows: Type.Union([Type.String(), Type.Array(Type.String())]),
                  actions: Type.Optional(Type.Array(oneOf(ACTIONS))),
                },
                { additionalProperties: false },
              ),
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
type Config = Static<typeof ConfigSchema>;

interface Rule {
  patterns: RegExp[];
  globs: string[];
  text: string;
  actions: ReadonlySet<Action>;
}
interface Identity extends Caller {
  rules: Rule[];
  /** The globs its schedules' concurrency keys must match; null: any key (the shared namespace). */
  keys: { patterns: RegExp[]; text: string } | null;
}

const glob = (pattern: string): RegExp =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
  );

export interface AccessConfig {
  authenticate(request: FastifyRequest): Caller;
  access: AccessControl;
  /** Whether a worker identity may lease and report tasks of `workflow`: one of its rules names it. */
  mayWork(caller: Caller, workflow: string): boolean;
}

/** Reads and validates the identities file; refuses it with a message naming the file and the problem. */
export function loadAccessConfig(path: string): AccessConfig {
  let raw: unknown;
  try {
    raw = parsePlainYaml(readBounded(path));
  } catch (err) {
    throw new OrbitError("INVALID_ARGUMENT", `--config ${path}: ${reasonOf(err)}`);
  }
  // Said plainly (a tester): an empty file read "must be a JSON object", and a file naming no
  // identity started a server that refused every request with 401, saying nothing.
  if (raw === null || raw === undefined || (typeof raw === "string" && raw.trim() === "")) {
    throw new OrbitError("INVALID_ARGUMENT", `--config ${path}: the file is empty; it must list \`identities:\``);
  }
  const listed = (raw as { identities?: unknown }).identities;
  if (Array.isArray(listed) && listed.length === 0) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--config ${path}: the file names no identity, so the server would refuse every request; add one, or start without --config`,
    );
  }
  // Checked as a request body is: the same Ajv, so the same one-sentence messages.
  const validate = compileRequestSchema(ConfigSchema, "body");
  if (!validate(raw)) {
    throw new OrbitError(
      "INVALID_ARGUMENT",
      `--config ${path}: ${describeValidationError(validate.errors ?? [], "body").replace("the request body", "the file")}`,
    );
  }
  return fromConfig(raw as Config, path);
}

/** An identities file holds names, hashes and globs: 4 MB is tens of thousands of identities. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/**
 * The file's text, refused past {@link MAX_CONFIG_BYTES}: `--config /dev/zero` was read until the
 * process ran out of memory (16 GB, then std::bad_alloc; a tester).
 */
function readBounded(path: string): string {
  try {
    return readCapped(path, MAX_CONFIG_BYTES);
  } catch (err) {
    if (err instanceof FileTooLarge) throw new Error(`the file is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MB`);
    throw err;
  }
}

export function fromConfig(config: Config, path = "config"): AccessConfig {
  const byHash = new Map<string, Identity>();
  const names = new Set<string>();
  for (const i of config.identities) {
    const hash = i.token_sha256.toLowerCase();
    if (byHash.has(hash))
      throw new OrbitError("INVALID_ARGUMENT", `--config ${path}: two identities share a token (${i.name})`);
    // A lease, an idempotency key and the log belong to an identity by its name: two of one name
    // could report on each other's leases (docs/security.md).
    if (names.has(i.name))
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `--config ${path}: two identities are named ${JSON.stringify(i.name)}; a lease belongs to the identity that took it, by name, so give each its own`,
      );
    names.add(i.name);
    // A worker's rules name the workflows it works on; actions are a client's. Taken, they gave a
    // worker token a client's powers over those workflows (start, settings, deprecate) that the
    // access matrix says no worker has: a client entry copied with its kind changed (a tester).
    if (i.kind === "worker" && (i.allow ?? []).some((a) => (a.actions?.length ?? 0) > 0)) {
      throw new OrbitError(
        "INVALID_ARGUMENT",
        `--config ${path}: identity ${JSON.stringify(i.name)} is a worker, whose allow rules name workflows only; remove its actions, or make it a client (kind: client) to start or change them`,
      );
    }
    byHash.set(
      hash,
      Object.freeze({
        name: i.name,
        kind: i.kind,
        rules: (i.allow ?? []).map((a) => {
          const patterns = [a.workflows].flat();
          return {
            patterns: patterns.map(glob),
            globs: patterns,
            text: patterns.join(", "),
            actions: new Set<Action>(a.actions ?? []),
          };
        }),
        keys:
          i.concurrency_keys === undefined
            ? null
            : { patterns: [i.concurrency_keys].flat().map(glob), text: [i.concurrency_keys].flat().join(", ") },
      }),
    );
  }
  const identityOf = (r: ApiRequest): Identity => {
    if (r.caller === null) throw new OrbitError("UNAUTHENTICATED", "this server requires a bearer token");
    return r.caller as Identity;
  };
  const allows = (r: ApiRequest, action: Action, workflow: string): boolean => {
    const id = identityOf(r);
    return id.rules.some(
      (rule) =>
        rule.patterns.some((p) => p.test(workflow)) &&
        (rule.actions.has(action) || (id.kind === "worker" && action === "read")),
    );
  };
  return {
    mayWork(caller, workflow) {
      const id = caller as Identity;
      return id.kind === "worker" && id.rules.some((rule) => rule.patterns.some((p) => p.test(workflow)));
    },
    authenticate(request) {
      const header = request.headers.authorization;
      if (header === undefined) {
        throw new OrbitError(
          "UNAUTHENTICATED",
          "this server requires a bearer token: send Authorization: Bearer <token> (orbit --token or ORBIT_TOKEN)",
        );
      }
      // Node keeps the first of repeated Authorization headers; a proxy may read the last. Two
      // credentials in one request name no one caller: refused.
      const raw = request.raw?.rawHeaders;
      if (raw !== undefined && raw.filter((h, i) => i % 2 === 0 && h.toLowerCase() === "authorization").length > 1) {
        throw new OrbitError("UNAUTHENTICATED", "the request carries more than one Authorization header: send one");
      }
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (m === null) {
        // `--token 'ord x'` was told only the header's form, not that a token holds no blank (a tester).
        const blank = /^Bearer\s+\S+\s+\S/i.test(header);
        throw new OrbitError(
          "UNAUTHENTICATED",
          blank
            ? "the bearer token holds a blank, which no token has: send the token alone after Bearer"
            : 'the Authorization header must be "Bearer <token>"',
        );
      }
      // Node reads header bytes as latin1; a token is hashed as UTF-8 (docs/security.md: sha256sum of
      // the token), so a non-ASCII token could never match: its bytes are read back as UTF-8 here.
      const token = Buffer.from(m[1]!, "latin1").toString("utf8");
      const identity = byHash.get(createHash("sha256").update(token).digest("hex"));
      if (identity === undefined)
        throw new OrbitError("UNAUTHENTICATED", "the bearer token is not one this server knows");
      return identity;
    },
    access: {
      allows,
      describe(r) {
        const id = identityOf(r);
        return {
          name: id.name,
          kind: id.kind,
          allow: id.rules.map((rule) => ({ workflows: rule.globs, actions: [...rule.actions] })),
        };
      },
      require(r, action, workflow) {
        if (allows(r, action, workflow)) return;
        const id = identityOf(r);
        // A worker's rules name workflows it may work on, with no actions: said so, not as "-".
        const granted = id.rules
          .map((rule) =>
            id.kind === "worker"
              ? `work on "${rule.text}"`
              : `${[...rule.actions].join("/") || "nothing"} on "${rule.text}"`,
          )
          .join("; ");
        if (id.kind === "worker" && id.rules.some((rule) => rule.patterns.some((p) => p.test(workflow)))) {
          // Its rules cover the workflow: the action is what a worker identity never has.
          throw new OrbitError(
            "PERMISSION_DENIED",
            `identity ${id.name} is a worker: it may work on and read workflow ${JSON.stringify(workflow)}, not ${action} it (docs/security.md § Identities)`,
          );
        }
        const what = id.kind === "worker" ? "work on" : action;
        throw new OrbitError(
          "PERMISSION_DENIED",
          `identity ${id.name} may not ${what} workflow ${JSON.stringify(workflow)} (it may: ${granted || "nothing"})`,
        );
      },
      requireConcurrencyKey(r, key) {
        const id = identityOf(r);
        if (id.keys === null || id.keys.patterns.some((p) => p.test(key))) return;
        throw new OrbitError(
          "PERMISSION_DENIED",
          `identity ${id.name} may not use concurrency key ${JSON.stringify(key)} (it may use: ${id.keys.text || "none"})`,
        );
      },
      requireClient(r) {
        const id = identityOf(r);
        if (id.kind !== "client") throw clientOnlyRefusal(id.name);
      },
    },
  };
}
