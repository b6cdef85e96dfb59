import { createLlmClient, type Endpoint, type LlmClient, resolveEndpoint } from "../agent/llm-client.js";
import type { Clock } from "../core/clock.js";
import type { AgentConfig } from "../core/config-schema.js";
import type { Logger } from "../core/logger.js";
import type { Env } from "../core/paths.js";

/** How long a reachability result is shown before `/status` triggers a new check. */
const STALE_MS = 60_000;

export interface ModelSnapshot {
  configured: boolean;
  name?: string;
  baseUrl: string;
  /** null: not checked yet. */
  reachable: boolean | null;
  checkedAt?: number;
  error?: string;
}

/**
 * The model endpoint and its cached reachability. `/status` reads the cache and never waits for a model call;
 * a stale cache triggers one background `GET /models`.
 */
export class ModelProbe {
  readonly endpoint: Endpoint;
  private llm: LlmClient | undefined;
  private state: { reachable: boolean | null; checkedAt?: number; error?: string } = { reachable: null };
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly agent: AgentConfig,
    env: Env,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly maxRetries?: number,
    /** The sidecar watchdog: how long one check may take. */
    private readonly checkSeconds = 90,
  ) {
    this.endpoint = resolveEndpoint(agent, env);
  }

  /** The model name, or undefined when none is configured. */
  modelName(): string | undefined {
    return this.agent.model;
  }

  /** The client, or undefined when no model is configured. */
  client(): LlmClient | undefined {
    if (!this.agent.model) return undefined;
    this.llm ??= createLlmClient({
      baseUrl: this.endpoint.baseUrl,
      apiKey: this.endpoint.apiKey,
      ...(this.maxRetries !== undefined ? { maxRetries: this.maxRetries } : {}),
    });
    return this.llm;
  }

  snapshot(): ModelSnapshot {
    const name = this.agent.model;
    return {
      configured: name !== undefined,
      ...(name ? { name } : {}),
      baseUrl: this.endpoint.baseUrl,
      reachable: this.state.reachable,
      ...(this.state.checkedAt !== undefined ? { checkedAt: this.state.checkedAt } : {}),
      ...(this.state.error ? { error: this.state.error } : {}),
    };
  }

  refreshIfStale(): void {
    const at = this.state.checkedAt;
    if (at === undefined || this.clock.now() - at > STALE_MS) this.refresh();
  }

  /** Starts one background check (at most one at a time); resolves when it is done. */
  refresh(): Promise<void> {
    const llm = this.client();
    if (!llm) return Promise.resolve();
    this.inFlight ??= (async () => {
      const result = await llm.listModels(AbortSignal.timeout(this.checkSeconds * 1000));
      const model = this.agent.model;
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
    return this.inFlight;
  }
}
