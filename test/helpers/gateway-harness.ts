import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TurnHooks } from "../../src/agent/turn-hooks.js";
import { ManualClock } from "../../src/core/clock.js";
import type { ClawdisConfig } from "../../src/core/config-schema.js";
import { composeConfigSchema } from "../../src/core/config-sections.js";
import { createMemoryLogger, type LogLine } from "../../src/core/logger.js";
import { Gateway } from "../../src/gateway.js";
import { registerApi } from "../../src/http/api.js";
import { builtinConfigSections } from "../../src/main.js";
import type {
  PluginDefinition,
  ReceiveResult,
  ToolDefinition,
  TurnOutcome,
} from "../../src/plugin-api/types.js";
import { readTranscript } from "../../src/sessions/transcript.js";
import type { MessageEntry } from "../../src/sessions/types.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai-server.js";
import { TestTransport } from "./test-transport.js";
import { type WaitOptions, waitWithDeadline } from "./wait-deadline.js";

export interface TestGateway {
  gateway: Gateway;
  chat: TestTransport;
  fake: FakeOpenAI;
  clock: ManualClock;
  stateDir: string;
  logs: LogLine[];
  /** Resolves when `gateway.start()` has (with `waitForStart: false` it may still be running). */
  started: Promise<unknown>;
  /** Resolves when every session is idle: turns over and their store updates written (read the store after it). */
  idle(): Promise<void>;
  /** The message entries of the current transcript of `key`. */
  transcript(key?: string): Promise<MessageEntry[]>;
  close(): Promise<void>;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

/**
 * An in-process gateway on real files in a temp state dir, the real openai SDK against the fake server, a test
 * transport, and a manual clock (watchdogs and idle expiry move only when the test says).
 */
export async function startTestGateway(
  options: {
    config?: DeepPartial<ClawdisConfig> & Record<string, unknown>;
    model?: string | null;
    plugins?: PluginDefinition[];
    tools?: ToolDefinition[];
    listen?: boolean;
    /** Reuse a state dir (a restart); it is then not removed by `close`. */
    stateDir?: string;
    fake?: FakeOpenAI;
    oneShot?: boolean;
    /** Where sessions.json (and so the transcripts) live; default `<state>/sessions/sessions.json`. */
    storePath?: string;
    /** false: return while `gateway.start()` still runs (a plugin still starting). */
    waitForStart?: boolean;
    /** Set on the test transport before the gateway starts it. */
    chat?: (chat: TestTransport) => void;
    /** Hooks every turn runs (a tool gate that asks). */
    turnHooks?: TurnHooks;
    /** Session titles as the config says (default false: no title calls or writes). */
    titles?: boolean;
  } = {},
): Promise<TestGateway> {
  const ownsState = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), "clawdis-gw-")));
  const ownsFake = options.fake === undefined;
  const fake = options.fake ?? (await startFakeOpenAI());
  const clock = new ManualClock(Date.now());
  const { logger, lines } = createMemoryLogger();
  const raw = (options.config ?? {}) as Record<string, unknown>;
  const inbound = (raw.inbound ?? {}) as Record<string, unknown>;
  const reply = (inbound.reply ?? {}) as Record<string, unknown>;
  const agent = (reply.agent ?? {}) as Record<string, unknown>;
  // The root schema with the built-in plugins' sections (webhooks, telegram, …), as the gateway composes it.
  const configSchema = composeConfigSchema(await builtinConfigSections({}));
  const config = configSchema.parse({
    ...raw,
    gateway: { port: 0, ...((raw.gateway as object) ?? {}) },
    inbound: {
      ...inbound,
      reply: {
        ...reply,
        agent: {
          baseUrl: fake.url,
          ...(options.model === null ? {} : { model: options.model ?? "fake-model" }),
          ...agent,
        },
      },
    },
  });
  const env = { CLAWDIS_STATE_DIR: stateDir, HOME: stateDir };
  const chat = new TestTransport();
  options.chat?.(chat);
  const gateway = new Gateway({
    config,
    env,
    storePath: options.storePath ?? join(stateDir, "sessions", "sessions.json"),
    workspaceDir: join(stateDir, "workspace"),
    configDir: stateDir,
    plugins: [chat.plugin, ...(options.plugins ?? [])],
    builtinTools: options.tools ?? [],
    logger,
    version: "test",
    token: "test-token-0123456789",
    clock,
    listen: options.listen ?? false,
    ...(options.oneShot ? { oneShot: true } : {}),
    registerApi,
    llmMaxRetries: 0,
    // Titles (a sidecar call and a store write after a session's first exchange) only where a test asks for them.
    ...(options.titles ? {} : { titles: false }),
    ...(options.turnHooks ? { turnHooks: options.turnHooks } : {}),
  });
  const started = gateway.start().then(() => gateway.pluginsStarted);
  if (options.waitForStart !== false) await started;
  return {
    gateway,
    chat,
    fake,
    clock,
    stateDir,
    logs: lines,
    started,
    idle: () => gateway.idle(),
    async transcript(key = "main") {
      const entry = await gateway.store.get(key);
      if (!entry) return [];
      const read = await readTranscript(gateway.store.transcriptPath(entry.sessionId));
      return read.entries.filter((e): e is MessageEntry => e.type === "message");
    },
    async close() {
      await gateway.stop();
      if (ownsFake) await fake.close();
      if (ownsState) await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/**
 * The outcome of an accepted message's turn; fails the test when the message was not accepted, and with "timed out
 * … waiting for the turn to end" when it does not end within `timeoutMs` (default WAIT_DEADLINE_MS, real time).
 */
export function done(result: ReceiveResult, options: WaitOptions = {}): Promise<TurnOutcome> {
  if (result.status !== "accepted") throw new Error(`not accepted: ${result.status}`);
  const turn = result.done;
  return waitWithDeadline<TurnOutcome>(
    "the turn to end (a reply, a watchdog's timeout, a stop or a failure)",
    options.timeoutMs,
    (resolve, reject) => {
      turn.then(resolve, reject);
      return () => {};
    },
  );
}
