/** /v1/workflows: register and read workflow versions (docs/api.md § Workflows). */

import { OrbitError } from "../domain/errors.js";
import { workflowToJson } from "../engine/serialize.js";
import { invalidWorkflowName, type RegisterWorkflowRequest } from "../engine/workflows.js";
import type { ApiDeps } from "./deps.js";
import type { RouteDef } from "./route.js";
import * as S from "./schemas.js";

export function workflowRoutes(d: ApiDeps): RouteDef[] {
  const access = d.access;
  return [
    {
      method: "POST",
      url: "/v1/workflows",
      creates: true,
      summary: "Register a workflow version (201 new, 200 identical exists)",
      tag: "workflows",
      body: S.RegisterWorkflowBody,
      responses: {
        201: { description: "registered", schema: S.Workflow },
        200: { description: "the identical version was already registered", schema: S.Workflow },
      },
      guard: (r) => {
        const name = (r.body as { name?: unknown } | undefined)?.name;
        // Workers register the workflows they run; clients need `start` on the name.
        if (access !== null && r.caller?.kind !== "worker") access.require(r, "start", String(name));
        if (access !== null && r.caller?.kind === "worker") access.require(r, "read", String(name));
      },
      handler: async (r) => {
        const { workflow, created } = await d.workflows.register(r.body as RegisterWorkflowRequest);
        return { status: created ? 201 : 200, body: workflowToJson(workflow) };
      },
    },
    {
      method: "GET",
      url: "/v1/workflows",
      summary: "Every registered version, by name, highest version first",
      tag: "workflows",
      responses: { 200: { description: "the workflows", schema: S.WorkflowList } },
      handler: async (r) => {
        const all = await d.workflows.list();
        const visible = access === null ? all : all.filter((w) => access.allows(r, "read", w.name));
        return { status: 200, body: { workflows: visible.map(workflowToJson) } };
      },
    },
    {
      method: "GET",
      url: "/v1/workflows/:name",
      summary: "The versions of one workflow, highest first",
      tag: "workflows",
      params: S.WorkflowNameParams,
      responses: { 200: { description: "the versions", schema: S.WorkflowVersions } },
      guard: (r) => access?.require(r, "read", String(r.params.name)),
      handler: async (r) => {
        refuseImpossibleName(String(r.params.name));
        const versions = await d.workflows.get(String(r.params.name));
        return { status: 200, body: { name: String(r.params.name), versions: versions.map(workflowToJson) } };
      },
    },
  ];
}

/**
 * 404 for a name no workflow can be registered under (`<script>`, `a b`), without the engine's
 * "orbit workflow register <name>@<version>", a command that would be refused for that name. A
 * `Name@version` keeps the engine's answer, which says to give the two apart.
 */
export function refuseImpossibleName(name: string): void {
  if (invalidWorkflowName(name) === null) return;
  const at = name.lastIndexOf("@");
  if (at > 0 && at < name.length - 1) return;
  throw new OrbitError(
    "NOT_FOUND",
    `no workflow is named ${JSON.stringify(name)}: it is not a valid workflow name (1-128 letters, digits, '_', '.' or '-', starting with a letter or digit)`,
  );
}
