import { resolveEndpoint } from "../agent/endpoint.js";
import type { AgentConfig } from "../core/config-schema.js";
import { formatAge } from "../core/format.js";
import { noModelHint } from "../core/no-model-hint.js";
import type { Env } from "../core/paths.js";
import { readConfigStatus } from "../runtime/config-state.js";
import { checkEndpoint, ENDPOINT_CHECK_MS } from "../runtime/endpoint-check.js";
import type { ModelSnapshot } from "../runtime/model-probe.js";
import { modelSetup } from "../runtime/model-source.js";
import type { DoctorReport } from "./doctor-journal.js";
import type { GatewayState } from "./gateway-client.js";

/**
 * Doctor's model check. With a gateway answering, what THAT gateway says (`GET /api/status` `model`): its model,
 * where the name and the endpoint came from, and its own last check of the endpoint; never what this process's
 * config and environment would give (the gateway may have been started with other `OPENAI_*` variables). Without
 * one (or `agent` undefined: the config does not load, nothing is said then), what the config and this
 * environment give, and one `GET /models` at the endpoint, given up after ENDPOINT_CHECK_MS: an endpoint that
 * does not answer is a problem naming it and the error, never a ✓.
 */
export async function checkModel(
  agent: AgentConfig | undefined,
  env: Env,
  configFile: string,
  gateway: GatewayState,
  report: DoctorReport,
): Promise<void> {
  if (gateway.running && gateway.error === undefined) {
    const model = readModelSnapshot(gateway.model);
    if (model) {
      const file = readConfigStatus(gateway.config)?.path ?? configFile;
      gatewayModelFindings(model, file, report);
      return;
    }
  }
  if (agent === undefined) return;
  const setup = modelSetup(agent, env);
  if (setup.state === "missing") {
    report.problem(noModelHint(configFile).join("\n    "));
    return;
  }
  const endpoint = resolveEndpoint(agent, env);
  const answer = await checkEndpoint(endpoint, ENDPOINT_CHECK_MS);
  if (!answer.ok) {
    const what = setup.state === "named" ? `model ${setup.name} (from ${setup.source})` : "the model";
    report.problem(`${what}: the endpoint ${endpoint.baseUrl} does not answer GET /models: ${answer.error}`);
    return;
  }
  if (setup.state === "named") {
    const listed = answer.models.length === 0 || answer.models.includes(setup.name);
    if (listed) report.ok(`model ${setup.name} (from ${setup.source}) at ${endpoint.baseUrl}, which answers`);
    else
      report.problem(
        `model ${setup.name} (from ${setup.source}) is not in the list of ${endpoint.baseUrl} (${answer.models.slice(0, 5).join(", ")}${answer.models.length > 5 ? ", …" : ""})`,
      );
    return;
  }
  if (answer.models.length === 1) {
    report.ok(
      `no model named: the gateway uses ${answer.models[0]}, the only model ${endpoint.baseUrl} lists`,
    );
  } else {
    report.problem(
      `no model named and ${endpoint.baseUrl} lists ${answer.models.length} models: set inbound.reply.agent.model in ${configFile}, or OPENAI_MODEL`,
    );
  }
}

/** The running gateway's model and its last endpoint check as findings; `configFile`: the gateway's own file. */
function gatewayModelFindings(model: ModelSnapshot, configFile: string, report: DoctorReport): void {
  if (!model.configured) {
    report.problem(noModelHint(configFile).join("\n    "));
    return;
  }
  const what = `the running gateway uses model ${model.name} (from ${model.source ?? "config"}) at ${model.baseUrl} (endpoint from ${model.endpointSource})`;
  if (model.reachable === null) {
    report.note(`${what}; it has not checked the endpoint yet`);
  } else if (!model.reachable) {
    report.problem(
      `the running gateway cannot reach its model endpoint ${model.baseUrl}: ${model.error ?? "no answer"}`,
    );
  } else if (model.error !== undefined) {
    report.problem(`${what}, which answers, but ${model.error}`);
  } else {
    const age =
      model.checkedAt !== undefined ? ` (checked ${formatAge(Date.now() - model.checkedAt)} ago)` : "";
    report.ok(`${what}, which answers${age}`);
  }
}

/** `model` of a gateway's `GET /api/status` answer, when it has the shape of a ModelSnapshot; else undefined. */
export function readModelSnapshot(value: unknown): ModelSnapshot | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.configured !== "boolean" || typeof v.baseUrl !== "string") return undefined;
  if (v.reachable !== null && typeof v.reachable !== "boolean") return undefined;
  const snapshot: ModelSnapshot = {
    configured: v.configured,
    baseUrl: v.baseUrl,
    endpointSource: (typeof v.endpointSource === "string"
      ? v.endpointSource
      : "config") as ModelSnapshot["endpointSource"],
    reachable: v.reachable,
  };
  if (typeof v.name === "string") snapshot.name = v.name;
  if (typeof v.source === "string") snapshot.source = v.source as NonNullable<ModelSnapshot["source"]>;
  if (typeof v.checkedAt === "number") snapshot.checkedAt = v.checkedAt;
  if (typeof v.error === "string") snapshot.error = v.error;
  return snapshot;
}
