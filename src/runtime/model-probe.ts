import { createLlmClient, type Endpoint, type LlmClient, resolveEndpoint } from "../agent/llm-client.js";
import type { Clock } from "../core/clock.js";
import type { AgentConfig } from "../core/config-schema.js";
import { linkedAbort } from "../core/linked-abort.js";
import type { Logger } from "../core/logger.js";
import type { Env } from "../core/paths.js";
import {
  configuredModel,
  type EndpointSource,
  endpointSource,
  type ModelSource,
  shouldDiscoverModel,
} from "./model-source.js";

/** How long a reachability result is shown before `/status` triggers a new check. */
const STALE_MS = 60_000;

export interface ModelSnapshot {
  configured: boolean;
  name?: string;
  /** Where the name came from (config, env OPENAI_MODEL, or the endpoint's only model). */
  source?: ModelSource;
  baseUrl: string;
  endpointSource: EndpointSource;
  /** null: not checked yet. */
  reachable: boolean | null;
  checkedAt?: number;
  error?: string;
}

/**
 * The model endpoint, the model, and the endpoint's cached reachability. `/status` reads the cache and never waits
 * for a model call; a stale cache triggers one background `GET /models`. The model is the config's, else env
 * `OPENAI_MODEL`; with neither and an endpoint chosen on purpose (config or `OPENAI_BASE_URL`), the endpoint's
 * only model when `GET /models` lists exactly one (found by the first check; `ready()` waits for it).
 */
export class ModelProbe {
  readonly endpoint: Endpoint;
  private llm: LlmClient | undefined;
  private model: { name: string; source: ModelSource } | undefined;
  private readonly discover: boolean;
  private firstCheck: Promise<void> | undefined;
  private state: { reachable: boolean | null; checkedAt?: number; error?: string } = { reachable: null };
  private inFlight: Promise<void> | undefined;
  /** Aborted by `stop`: ends a check in flight (its request and its wait before a retry). */
  private readonly stopped = new AbortController();

  constructor(
    agent: AgentConfig,
    env: Env,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly maxRetries?: number,
    /** The sidecar watchdog: how long one check may take. */
    private readonly checkSeconds = 90,
  ) {
    this.endpoint = resolveEndpoint(agent, env);
    this.model = configuredModel(agent, env);
    this.discover = shouldDiscoverModel(agent, env);
    this.source = endpointSource(agent, env);
  }

  private readonly source: EndpointSource;

  /** The model name, or undefined when none is configured (or found yet). */
  modelName(): string | undefined {
    return this.model?.name;
  }

  /** Resolves once the first check is done when the model is to be found at the endpoint (else at once). */
  ready(): Promise<void> {
    return this.discover && !this.model ? (this.firstCheck ?? this.refresh()) : Promise.resolve();
  }

  /** The client, or undefined when there is no model and none is to be found. */
  client(): LlmClient | undefined {
    if (!this.model && !this.discover) return undefined;
    return this.endpointClient();
  }

  private endpointClient(): LlmClient {
    this.llm ??= createLlmClient({
      baseUrl: this.endpoint.baseUrl,
      apiKey: this.endpoint.apiKey,
      ...(this.maxRetries !== undefined ? { maxRetries: this.maxRetries } : {}),
    });
    return this.llm;
  }

  snapshot(): ModelSnapshot {
    const model = this.model;
    return {
      configured: model !== undefined,
      ...(model ? { name: model.name, source: model.source } : {}),
      baseUrl: this.endpoint.baseUrl,
      endpointSource: this.source,
      reachable: this.state.reachable,
      ...(this.state.checkedAt !== undefined ? { checkedAt: this.state.checkedAt } : {}),
      ...(this.state.error ? { error: this.state.error } : {}),
    };
  }

  refreshIfStale(): void {
    const at = this.state.checkedAt;
    if (at === undefined || this.clock.now() - at > STALE_MS) this.refresh();
  }

  /**
   * Ends the check in flight (its request, or its wait before a retry) and starts none after: resolves once it has
   * ended, with nothing recorded or logged for it. For a gateway that stops, or replaces this probe.
   */
  stop(): Promise<void> {
    this.stopped.abort();
    return this.inFlight ?? Promise.resolve();
  }

  /** Starts one background check (at most one at a time); resolves when it is done. */
  refresh(): Promise<void> {
    const llm = this.client();
    if (!llm || this.stopped.signal.aborted) return Promise.resolve();
    this.inFlight ??= (async () => {
      // The check's own signal: its deadline, or `stop`. (Not AbortSignal.any over the probe's long-lived signal:
      // each check would stay registered on it; both links are undone when the check ends.)
      const check = linkedAbort(AbortSignal.timeout(this.checkSeconds * 1000));
      const onStop = () => check.controller.abort(this.stopped.signal.reason);
      this.stopped.signal.addEventListener("abort", onStop, { once: true });
      let result: Awaited<ReturnType<LlmClient["listModels"]>>;
      try {
        result = await llm.listModels(check.controller.signal);
      } finally {
        check.dispose();
        this.stopped.signal.removeEventListener("abort", onStop);
      }
      if (this.stopped.signal.aborted) return;
      if (result.ok && !this.model && this.discover) {
        if (result.models.length === 1) {
          this.model = { name: result.models[0]!, source: "the endpoint's only model" };
          this.logger.info(`using the endpoint's only model ${result.models[0]}`, {
            baseUrl: this.endpoint.baseUrl,
          });
        } else {
          this.logger.warn(
            `no model is configured and the endpoint lists ${result.models.length} models; set inbound.reply.agent.model or OPENAI_MODEL`,
            { baseUrl: this.endpoint.baseUrl },
          );
        }
      }
      const model = this.model?.name;
      if (result.ok) {
        const listed = result.models.length === 0 || (model !== undefined && result.models.includes(model));
        this.state = {
          reachable: true,
          checkedAt: this.clock.now(),
          ...(listed ? {} : { error: `model "${model}" is not in the endpoint's list` }),
        };
      } else {
        this.state = { reachable: false, checkedAt: this.clock.now(), error: result.error };
        this.logger.warn("model endpoint check failed", { error: result.error });
      }
    })().finally(() => {
      this.inFlight = undefined;
    });
    this.firstCheck ??= this.inFlight;
    return this.inFlight;
  }
}
