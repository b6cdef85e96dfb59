// Over 400 lines, by design: this is the composition root. The constructor wires every part of the gateway, and
// `start`, `receive` and `stop` put them in order; what each part decides lives in the files it imports.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { preloadModelSdk } from "./agent/llm-client.js";
import type { TurnHooks } from "./agent/turn-hooks.js";
import { type Clock, systemClock } from "./core/clock.js";
import { diffConfig } from "./core/config-diff.js";
import type { ClawdisConfig } from "./core/config-schema.js";
import { type Logger, setLogLevel } from "./core/logger.js";
import { type Env, resolveConfigPath, stateDir as stateDirOf } from "./core/paths.js";
import { effectiveTimeZone } from "./core/time-zone.js";
import { type PluginContextDeps, pluginContext } from "./host/plugin-context.js";
import { PluginHost } from "./host/plugin-host.js";
import { HttpServer } from "./http/http-server.js";
import { GatewayJobs } from "./jobs/gateway-jobs.js";
import type {
  ApprovalDecision,
  GatewayEvent,
  InboundMessage,
  PluginDefinition,
  ReceiveResult,
  ToolDefinition,
} from "./plugin-api/types.js";
import { GatewayReminders } from "./reminders/gateway-reminders.js";
import { remindTool } from "./reminders/remind-tool.js";
import {
  allowStep,
  dedupeStep,
  journalStep,
  sessionKeyStep,
} from "./routing/inbound-pipeline/admission-steps.js";
import { commandStep } from "./routing/inbound-pipeline/command-step.js";
import { enqueueStep, mentionGateStep } from "./routing/inbound-pipeline/dispatch-steps.js";
import { compose, type InboundContext } from "./routing/inbound-pipeline/types.js";
import { sessionKeyFor } from "./routing/session-key.js";
import { SessionQueue } from "./routing/session-queue.js";
import { acceptedWork } from "./runtime/accepted-work.js";
import { Approvals } from "./runtime/approvals/approvals.js";
import { ApprovalsFile } from "./runtime/approvals/approvals-file.js";
import type { ConfigReloadPlan } from "./runtime/config-reloader.js";
import { ConfigState } from "./runtime/config-state.js";
import { ControlRequests, type RestartAnswer, type StopRequest } from "./runtime/control-requests.js";
import type { DrainMode } from "./runtime/drain-resume.js";
import { EventBus } from "./runtime/event-bus.js";
import { type InternalInput, internalMessage } from "./runtime/internal-input.js";
import { ModelProbe } from "./runtime/model-probe.js";
import { maxParkedBytesFrom, Outbox } from "./runtime/outbox.js";
import { repairReplies } from "./runtime/repair-replies.js";
import { replayItem } from "./runtime/replay-item.js";
import {
  type RestartManifest,
  restartManifestPath,
  takeRestartManifest,
} from "./runtime/restart-manifest.js";
import { SendThread } from "./runtime/send-thread/send-thread.js";
import { openParked } from "./runtime/session/parked-batch.js";
import { sessionRootsOf } from "./runtime/session/session-workspace.js";
import { SessionRegistry } from "./runtime/session-registry.js";
import { SessionRunner, type WorkItem } from "./runtime/session-runner.js";
import { SessionTitler } from "./runtime/session-titler.js";
import { SessionUpkeep } from "./runtime/session-upkeep.js";
import { drainWithin, runShutdown, type ShutdownStage } from "./runtime/shutdown.js";
import { stateLockPath } from "./runtime/state-lock.js";
import { stateSecrets } from "./runtime/state-secrets.js";
import type { StatusAudience } from "./runtime/status-report.js";
import { statusText } from "./runtime/status-text.js";
import { type TurnToolsInput, toolsForTurn } from "./runtime/tools-policy.js";
import { TranscriptSync } from "./runtime/transcript-sync.js";
import { warmSessions } from "./runtime/warm-sessions.js";
import { removeAbandonedTempFiles } from "./sessions/abandoned-temp-files.js";
import { Journal } from "./sessions/journal.js";
import { secretValues } from "./sessions/log-redact.js";
import { SessionLogs } from "./sessions/session-log.js";
import { type SessionPaths, sessionPaths } from "./sessions/session-paths.js";
import { SessionStore } from "./sessions/store.js";
import { preloadLockLibrary } from "./sessions/store-lock.js";
import { readTranscript } from "./sessions/transcript.js";
import { resumeBudgetBytes } from "./sessions/transcript-resume.js";
import { GatewaySubagents } from "./subagents/gateway-subagents.js";

/** How long a stop lets sends in flight finish. */
const STOP_SEND_GRACE_MS = 5_000;
/** How long `/model` waits for the endpoint's model list. */
const LIST_MODELS_MS = 10_000;

/**
 * How long a stop waits for running turns to reach their safe point (docs/runtime.md, Stopping and restarting);
 * then what still runs is aborted. With the sends' grace and the plugins' stop it stays within the 30 s stop.
 */
export const DRAIN_DEADLINE_MS = 20_000;

export type { RestartAnswer, StopRequest } from "./runtime/control-requests.js";

export interface GatewayOptions {
  config: ClawdisConfig;
  env: Env;
  storePath: string;
  workspaceDir: string;
  /** The folder relative plugin paths are resolved against. */
  configDir: string;
  /** The config file that was read (or looked for), for `/status`. */
  configPath?: string;
  plugins: PluginDefinition[];
  builtinTools: ToolDefinition[];
  logger: Logger;
  version: string;
  token: string;
  clock?: Clock;
  /** Whether to open the HTTP server (false for `clawdis agent` in-process). */
  listen: boolean;
  /** One in-process turn (`clawdis agent` without a gateway): no journal replay, no endpoint probe. */
  oneShot?: boolean;
  /** SDK retries of model calls (default 2; tests pass 0). */
  llmMaxRetries?: number;
  /** False: no session titles whatever the config says (in-process tests that count model calls and store writes). */
  titles?: boolean;
  /** Hooks every turn runs after the built-in ones (tests install a tool gate that asks); none by default. */
  turnHooks?: TurnHooks;
  /** Registers the gateway's own `/api/*` routes on the server. */
  registerApi?: (gateway: Gateway, server: HttpServer) => void;
}

/**
 * The composition root: it builds the store, the journal, the outbox, the session registry and runner, the plugin
 * host and the HTTP server, and wires them through the functions each is given. A message enters at `receive`:
 * admission (dedupe → allowlist → session key → journal; `receive` resolves once the record is on disk), then,
 * after what the last run left open, dispatch (mention gate → immediate commands → the session's queue), from
 * which the session runner takes it. Created by `createGateway`; `start()` then `stop()`.
 */
export class Gateway {
  readonly store: SessionStore;
  readonly events = new EventBus();
  readonly startedAt: number;
  readonly clock: Clock;
  readonly host: PluginHost;
  readonly journal: Journal;
  /** Syncs behind the transcripts whose replies the journal holds (docs/runtime.md, A turn, step 5). */
  readonly transcriptSync: TranscriptSync;
  /** The model endpoint (a new one when the agent's endpoint, key or model changes: `applyConfig`). */
  get modelProbe(): ModelProbe {
    return this.probe;
  }
  private probe: ModelProbe;
  /** The config it runs on now (`applyConfig` replaces it); read at each use, never copied. */
  private current: ClawdisConfig;
  /** The config file and the last edit that did not take (the config reloader keeps it). */
  readonly configState: ConfigState;
  private readonly http: HttpServer;
  private readonly queue: SessionQueue<WorkItem>;
  private readonly admission: (ctx: InboundContext) => Promise<void>;
  private readonly dispatch: (ctx: InboundContext) => Promise<void>;
  readonly outbox: Outbox;
  /** Runs once `start` has opened the journal (runtime/send-thread/); undefined before, and in a one-shot run. */
  private sendThread: SendThread | undefined;
  private readonly runner: SessionRunner;
  /** What is held warm per session, unloaded after `passivateAfterMinutes` idle (docs/runtime.md, Memory). */
  readonly sessions: SessionRegistry;
  /** `<state>/reminders.json`, its scheduler and the `remind` tool (docs/tools.md, Reminders). */
  readonly reminders: GatewayReminders;
  /** Sub-agent runs: `spawn_agent`, `check_agent_run`, their folders and notices (docs/tools.md, Sub-agents). */
  readonly subagents: GatewaySubagents;
  /** Session upkeep: `maintenance` at start and daily, and `POST /api/sessions/cleanup` (docs/sessions.md). */
  readonly upkeep: SessionUpkeep;
  /** Names a session after its first exchange (docs/sessions.md, Titles). */
  private readonly titler: SessionTitler;
  private stopping = false;
  /** Items waiting to be tried again after a passing failure (cleared at stop: their records stay open). */
  private readonly retries = new Set<unknown>();
  /** Resolves once every plugin has started or failed its first attempt (see `start`). */
  pluginsStarted: Promise<void> = Promise.resolve();
  /** The removal of temp files left by writes a kill cut short (start); the paths removed. Never rejects. */
  tempFilesSwept: Promise<string[]> = Promise.resolve([]);
  private stopped: Promise<void> | undefined;
  private address: { port: number; host: string } | undefined;
  /** The in-process restart this gateway was started by (from `<state>/restart.json`), for `/status`. */
  private restartedBy: RestartManifest | undefined;
  /** Keys handed to the session registry since the start (pruned to those it still holds: see activeSessions). */
  private readonly touched = new Set<string>();
  private readonly control = new ControlRequests();
  /** Resolves once the records left open by the last run are queued: new messages are dispatched after them. */
  private replayQueued: Promise<void>;
  private markReplayQueued: () => void = () => {};
  /** The state directory's files no tool call may touch (src/runtime/state-secrets.ts). */
  private readonly secrets: readonly { path: string; what: string }[];
  /** Every session's `logs/session.log` (written behind; flushed at stop). */
  readonly sessionLogs: SessionLogs;
  /** The secret values no session log line shows, for the config they were found in. */
  private logSecrets: { config: ClawdisConfig; values: readonly string[] } | undefined;
  /** Approvals in chat: the gate of every turn, the prompts, the answers (docs/tools.md). */
  readonly approvals: Approvals;
  /** Background jobs: `bash` with `background: true`, the job tools, their results (docs/tools.md). */
  readonly jobs: GatewayJobs;

  constructor(readonly options: GatewayOptions) {
    this.replayQueued = new Promise((resolve) => {
      this.markReplayQueued = resolve;
    });
    this.clock = options.clock ?? systemClock;
    this.secrets = stateSecrets(options.env, options.configPath);
    const gateway = this;
    this.startedAt = this.clock.now();
    const logger = options.logger;
    this.store = new SessionStore({
      path: options.storePath,
      logger: logger.child("store"),
      clock: this.clock,
    });
    this.journal = new Journal({
      dir: join(stateDirOf(options.env), "journal"),
      logger: logger.child("journal"),
      syncTranscripts: () => this.transcriptSync.syncAll(),
    });
    this.transcriptSync = new TranscriptSync({
      journal: this.journal,
      logger: logger.child("session"),
      now: () => this.clock.now(),
    });
    this.http = new HttpServer({ token: options.token, logger: logger.child("http") });
    this.reminders = new GatewayReminders({
      stateDir: stateDirOf(options.env),
      clock: this.clock,
      startedAt: this.startedAt,
      logger: logger.child("reminders"),
      timeZone: () => this.timeZone(),
      primaryKey: () => this.mainKey,
      // The names only: the `remind` tool given here is never run.
      toolNamesFor: (key) => (who) => this.toolNames(key, who),
      hasOrigin: async (key) => {
        // The session's last turn wrote its origin behind its reply.
        await this.runner.recorded(key);
        return (await this.store.get(key))?.origin !== undefined;
      },
      submit: (input) => this.submitInternal(input),
    });
    this.subagents = new GatewaySubagents({
      clock: this.clock,
      logger: logger.child("subagents"),
      storeDir: this.store.dir,
      sessionOf: async (key) => {
        const found = await this.sessionPathsOf(key);
        return (
          found && {
            sessionId: found.sessionId,
            folder: found.paths.folder,
            workspace: found.paths.workspace,
          }
        );
      },
      parentTools: (key, message) => this.toolsFor(key, message),
      settings: () => {
        const llm = this.modelProbe.client();
        const model = this.modelProbe.modelName();
        if (!llm || model === undefined) return "no model is set up";
        return {
          llm,
          model,
          timeouts: this.config.inbound.reply.session.timeouts,
          maxOutputTokens: this.config.inbound.reply.agent.maxOutputTokens,
          hooks: (cwd) => [this.approvals.gate(cwd), ...(options.turnHooks ? [options.turnHooks] : [])],
        };
      },
      submit: (input) => this.submitInternal(input),
      ask: (child) => this.approvals.askChild(child),
      asked: (id) => this.approvals.childWaits(id),
      dropAsks: (id, why) => this.approvals.dropChild(id, why),
    });
    this.jobs = new GatewayJobs({
      clock: this.clock,
      logger: logger.child("jobs"),
      folderOf: async (key) => (await this.sessionPathsOf(key))?.paths.folder,
      toolNamesFor: (key, message) => this.toolNames(key, message),
      submit: (input) => this.submitInternal(input),
    });
    // `/new` ends the jobs of the conversation it leaves.
    this.events.on((event) => {
      if (event.type === "session" && event.reason === "reset")
        void this.jobs.killSession(event.sessionKey, "new");
    });
    this.current = options.config;
    this.configState = new ConfigState(options.configPath ?? "", this.startedAt);
    this.probe = this.newProbe(options.config);
    this.outbox = new Outbox({
      transport: (channel) => this.host.transports().get(channel),
      journal: this.journal,
      clock: this.clock,
      logger: logger.child("outbox"),
      maxParkedBytes: maxParkedBytesFrom(options.env),
      spillDir: join(stateDirOf(options.env), "outbox"),
      sendThread: () => this.sendThread,
      // Getters: read at each use, so a config change applies live.
      get warnAfterMs() {
        return gateway.config.gateway.parkedReplyWarnSeconds * 1000;
      },
    });
    this.sessionLogs = new SessionLogs({
      secrets: () => this.secretValuesNow(),
      now: () => this.clock.now(),
      logger: logger.child("session-log"),
    });
    this.approvals = new Approvals({
      journal: this.journal,
      logger: logger.child("approvals"),
      clock: this.clock,
      file: new ApprovalsFile(
        join(stateDirOf(options.env), "approvals.json"),
        logger.child("approvals"),
        () => this.clock.now(),
      ),
      setting: () => this.config.inbound.reply.agent.approvals,
      parked: async (key) => {
        const entry = await this.store.get(key);
        if (!entry) return undefined;
        const read = await readTranscript(this.store.transcriptPath(entry.sessionId));
        return openParked(read.entries);
      },
      tell: async (chat, sessionKey, text, extra = {}) => {
        this.events.emit({ type: "notice", sessionKey, text, ts: this.clock.now(), ...extra });
        if (!this.host.states().some((p) => p.id === chat.channel)) return;
        await this.outbox.enqueue({ ...chat, text, kind: "notice", ...extra });
      },
      answered: async (item, text, then) => {
        await item.durable;
        await this.journal.end(item.jid, "replied", this.clock.now(), "answered by an approval's note");
        const note = this.runner.outcomeFor(item, "command", [text]);
        if (!then) return item.resolve(note);
        void then.then(
          (resumed) => item.resolve({ ...resumed, payloads: [...note.payloads, ...resumed.payloads] }),
          () => item.resolve(note),
        );
      },
      resume: (input, follow) => this.submitInternal(input, follow),
      answer: (item, text) => this.runner.answer(item, text),
      ignore: async (item, why) => {
        await item.durable;
        await this.journal.end(item.jid, "filtered", this.clock.now(), why);
        item.resolve(this.runner.outcomeFor(item, "filtered", []));
      },
      enqueue: (item) => this.enqueue(item),
      // The chat the owner last wrote from in that session, else in the primary session (where the owner talks).
      ownerChat: async (key) =>
        (await this.store.getWithUpdates(key))?.ownerChat ??
        (await this.store.getWithUpdates(this.mainKey))?.ownerChat,
      resumeChild: (runId, decisions) => this.subagents.answer(runId, decisions),
    });
    this.events.on((event) => this.approvals.onEvent(event));
    this.sessions = new SessionRegistry({
      clock: this.clock,
      get passivateAfterMinutes() {
        return gateway.config.inbound.reply.session.passivateAfterMinutes;
      },
      busy: (key) =>
        this.queue.isBusy(key) ||
        this.queue.waiting(key) > 0 ||
        this.subagents.holds(key) ||
        this.jobs.hasLive(key),
      save: async (session) => {
        await this.jobs.killSession(session.key, "passivated");
        await this.runner.saveWarm(session);
      },
      logger: logger.child("session"),
    });
    this.runner = new SessionRunner({
      storage: {
        store: this.store,
        journal: this.journal,
        transcriptSync: this.transcriptSync,
        sessions: this.sessions,
        sessionLogs: this.sessionLogs,
      },
      delivery: { outbox: this.outbox, events: this.events },
      model: {
        llm: () => this.modelProbe.client(),
        name: () => this.modelProbe.modelName(),
        ready: () => this.modelProbe.ready(),
        toolsFor: (key, message) => this.toolsFor(key, message),
        ...(options.turnHooks ? { turnHooks: options.turnHooks } : {}),
        approvalGate: (cwd) => this.approvals.gate(cwd),
      },
      queue: {
        takeJoinable: (key, predicate) => this.queue.takeJoinable(key, predicate),
        isStopping: () => this.stopping,
        retryLater: (item, delayMs) => this.retryLater(item, delayMs),
        waiting: (key) => this.queue.waiting(key),
        findWaiting: (key, predicate) => this.queue.find(key, predicate),
      },
      runtime: {
        get config() {
          return gateway.config;
        },
        configPath: () => options.configPath ?? resolveConfigPath(options.env).path,
        clock: this.clock,
        logger: logger.child("session"),
        workspaceDir: options.workspaceDir,
        stagingRoot: join(stateDirOf(options.env), "plugins"),
      },
    });
    this.queue = new SessionQueue((key, item) =>
      item.compact ? this.runner.compactNow(key, item) : this.runner.process(key, item),
    );
    this.titler = new SessionTitler({
      store: this.store,
      clock: this.clock,
      logger: logger.child("titles"),
      llm: () => this.modelProbe.client(),
      model: () => this.modelProbe.modelName(),
      sidecarSeconds: () => this.config.inbound.reply.session.timeouts.sidecarLlmSeconds,
      enabled: () => options.titles !== false && this.config.inbound.reply.session.titles,
      recorded: (key) => this.runner.recorded(key),
    });
    this.events.on((event) => this.titler.onEvent(event));
    this.upkeep = new SessionUpkeep({
      store: this.store,
      clock: this.clock,
      logger: logger.child("upkeep"),
      maintenance: () => this.config.inbound.reply.session.maintenance,
      primaryKey: () => this.mainKey,
      // Loaded (warm or working) or with work queued: never pruned under it.
      inUse: (key) =>
        this.sessions.phaseOf(key) !== undefined || this.queue.isBusy(key) || this.queue.waiting(key) > 0,
    });
    this.admission = compose([
      dedupeStep({ isDuplicate: (m) => this.journal.isDuplicate(m) }),
      allowStep({
        inputTransport: (channel) => this.host.inputTransport(channel),
        logDenied: (m, reason) =>
          logger.info("message from a sender that is not allowed: ignored", {
            channel: m.channel,
            sender: m.senderId,
            reason,
          }),
      }),
      sessionKeyStep({ sessionKeyFor: (m) => this.sessionKeyFor(m) }),
      // Written now, fsync'd while the message's turn begins: `receive` resolves only once it is on disk.
      journalStep({
        accept: async (ctx) =>
          acceptedWork(
            await this.journal.acceptWritten(ctx.message, this.clock.now(), { local: ctx.local }),
            ctx,
          ),
      }),
    ]);
    const enqueue = (item: WorkItem) => this.enqueue(item);
    this.dispatch = compose([
      mentionGateStep({
        groupChat: () => this.config.inbound.groupChat,
        // While an approval waits, a group message kept as context is an answer or waits (stored now, it would
        // come between the parked calls and their results): approvals.ts, unaddressed.
        enqueue: (item) => {
          void this.approvals
            .unaddressed(item, false)
            .then((taken) => {
              if (!taken) this.enqueue(item);
            })
            .catch((error) => this.runner.fail(item, error));
        },
      }),
      commandStep({
        answer: (item, text) => this.runner.answer(item, text),
        status: (key, audience) => this.statusText(key, audience),
        abortTurn: (key) => this.runner.abort(key, "stop"),
        entry: (key) => this.store.get(key),
        updateEntry: (key, change) => this.store.update(key, change),
        now: () => this.clock.now(),
        listModels: async () =>
          (await this.modelProbe.client()?.listModels(AbortSignal.timeout(LIST_MODELS_MS))) ?? {
            ok: false,
            error: "no model endpoint is configured",
          },
        configuredModel: () => this.modelProbe.modelName(),
        compact: (item) => {
          item.compact = true;
          this.enqueue(item);
        },
      }),
      this.approvals.step(),
      enqueueStep({ enqueue }),
    ]);
    const entries: Record<string, { enabled: boolean; config?: unknown }> = {};
    for (const [id, entry] of Object.entries(options.config.plugins.entries)) entries[id] = entry;
    const plugins: PluginContextDeps = {
      stateDir: stateDirOf(options.env),
      gatewayConfig: () => this.config,
      primarySessionKey: () => this.mainKey,
      logger,
      gatewayToken: options.token,
      route: (method, path, handler, routeOptions) => this.http.route(method, path, handler, routeOptions),
      onEvent: (listener) => this.events.on(listener),
      receive: (message) => this.receive(message, { local: false }),
    };
    this.host = new PluginHost({
      definitions: options.plugins,
      entries,
      gatewayConfig: options.config,
      logger: logger.child("plugins"),
      clock: this.clock,
      contextFor: (definition, config, retired) => pluginContext(plugins, definition, config, retired),
      // A transport restarted for a config change waits for the sends in flight (others' too: at most this long).
      drainSends: () => this.outbox.settle(STOP_SEND_GRACE_MS),
      onLaunch: (definition) => {
        if (definition.sendThread === true) this.startSendThread();
      },
    });
    // A transport that comes up sends what waited for it.
    this.host.onStateChange((status) => {
      if (status.state === "ok" || status.state === "degraded") this.outbox.wake(status.id);
    });
  }

  get config(): ClawdisConfig {
    return this.current;
  }

  /** The config's secrets, the gateway token and the environment's `*_KEY`/`*_TOKEN`/`*_SECRET` values. */
  private secretValuesNow(): readonly string[] {
    if (this.logSecrets?.config !== this.current) {
      this.logSecrets = {
        config: this.current,
        values: secretValues(this.current, this.options.env, [this.options.token]),
      };
    }
    return this.logSecrets.values;
  }

  private newProbe(config: ClawdisConfig): ModelProbe {
    return new ModelProbe(
      config.inbound.reply.agent,
      this.options.env,
      this.clock,
      this.options.logger.child("model"),
      this.options.llmMaxRetries,
      config.inbound.reply.session.timeouts.sidecarLlmSeconds,
    );
  }

  /**
   * What `next` would change while this gateway runs (docs/configuration.md, Changing the config while it runs).
   * @throws ClawdisError CONFIG_INVALID for a plugin's settings under `next` (nothing is changed).
   */
  planConfig(next: ClawdisConfig): ConfigReloadPlan {
    const plugins = this.host.planReload({ gatewayConfig: next, entries: next.plugins.entries });
    return { diff: diffConfig(this.current, next, plugins.infos), plugins };
  }

  /**
   * Applies a planned change that needs no gateway restart: every live key is read from `next` from now on (the
   * session runner, the pipeline, the outbox and the session registry read `config` at each use; a new model
   * endpoint gets a new probe; the log level changes), and each transport in `plan.diff.transports` restarts
   * alone after its sends in flight. Resolves once those restarts have started or failed their first attempt.
   */
  async applyConfig(next: ClawdisConfig, plan: ConfigReloadPlan): Promise<void> {
    this.current = next;
    const endpoint = [
      "inbound.reply.agent.baseUrl",
      "inbound.reply.agent.apiKey",
      "inbound.reply.agent.model",
    ];
    const probeKeys = [...endpoint, "inbound.reply.session.timeouts.sidecarLlmSeconds"];
    if (plan.diff.live.some((key) => probeKeys.includes(key))) {
      // The old probe's check in flight ends: its result would describe an endpoint no longer used.
      void this.probe.stop();
      this.probe = this.newProbe(next);
      if (!this.options.oneShot) this.probe.refresh();
    }
    setLogLevel(this.options.logger, next.logging.level);
    await this.host.applyReload(plan.plugins, plan.diff.transports, plan.diff.live);
  }

  /** The session every direct chat lands in: `mainKey`, or `global` under `scope: "global"`. */
  get mainKey(): string {
    return sessionKeyFor({ chatType: "direct", chatId: "" }, this.config.inbound.reply.session);
  }

  /**
   * Opens the journal, starts plugins and the HTTP server, then finishes what the last run left open (only when
   * not a one-shot run: `clawdis agent` in-process leaves that to the gateway).
   */
  async start(): Promise<{ port: number; host: string } | undefined> {
    // A one-shot run leaves the journal file as it is (no compaction): the next gateway reads it whole.
    const open = await this.journal.openJournal({
      compact: !this.options.oneShot,
      // What a power cut may have taken from the transcripts behind the journal's replies is put back first.
      repair: (replies) =>
        repairReplies(replies, {
          transcriptPath: (sessionId) => this.store.transcriptPath(sessionId),
          logger: this.options.logger.child("journal"),
          now: () => this.clock.now(),
        }),
    });
    // After an in-process restart: the sessions that were active are loaded back before any traffic comes in.
    if (!this.options.oneShot) await this.warmFromManifest();
    if (this.options.listen) this.options.registerApi?.(this, this.http);
    // The server listens first, then plugins start in the background (each within its deadline): the local API
    // and web chat wait neither for a slow transport nor for loading a plugin's code (the Telegram runtime with
    // grammY, some 30 ms), replies to a transport that is still starting wait for it in the outbox, and what it
    // hands in while starting is accepted. A request for a route that a plugin registers when it is created waits
    // until the plugins have started (HttpServer.holdUnmatched): a webhook arriving meanwhile is not a 404.
    if (this.options.listen) {
      const { port, bind } = this.config.gateway;
      let release: (started: Promise<void>) => void = () => {};
      this.http.holdUnmatched(
        new Promise<void>((resolve) => {
          release = resolve;
        }),
      );
      try {
        const address = await this.http.listen(port, bind);
        this.address = { port: address.port, host: bind };
      } catch (error) {
        release(Promise.resolve());
        this.markReplayQueued();
        throw error;
      }
      this.pluginsStarted = this.host.start();
      release(this.pluginsStarted);
    } else this.pluginsStarted = this.host.start();
    // A one-shot in-process run (`clawdis agent` without a gateway) has no transports to deliver to: it leaves
    // what the journal holds open for the next real gateway, and does not probe the endpoint.
    if (this.options.oneShot) {
      this.markReplayQueued();
      await this.pluginsStarted;
      return undefined;
    }
    this.modelProbe.refresh();
    // The first sends wait for the modules loaded on first use to load (the model SDK for the endpoint probe above
    // and the first turn, the lock library for the first store update): compiling them holds the event loop, and a
    // chat app's answer read late widens the window in which a kill -9 sends a reply twice (outbox.ts, holdUntil).
    // Replies that a transport sends through `confirmingFetch` go out on the send thread, which records each
    // delivery the moment its chat app takes it (runtime/send-thread/); the first sends wait for it to run.
    // The thread is started by the first launch of a plugin that sends through it (`onLaunch`, in `host.start`
    // above): none, no thread.
    this.outbox.holdUntil(Promise.all([preloadModelSdk(), preloadLockLibrary(), this.sendThread?.ready]));
    // In the background, not on the way to listening: the temp files of atomic writes of the store, the journal,
    // the state lock, restart.json and reminders.json that a kill cut short (their files are intact; the temp files
    // are dead weight).
    const stateDir = stateDirOf(this.options.env);
    this.tempFilesSwept = removeAbandonedTempFiles(
      [
        this.options.storePath,
        this.journal.filePath,
        stateLockPath(stateDir),
        restartManifestPath(stateDir),
        this.reminders.file.path,
      ],
      // Ages are judged by the file system's clock, not the injected one.
      { logger: this.options.logger, now: Date.now() },
    );
    if (open.length > 0)
      this.options.logger.info("finishing messages accepted before the last stop", { count: open.length });
    const channels = {
      hasPlugin: (channel: string) => this.host.states().some((p) => p.id === channel),
      sessionKeyFor: (message: InboundMessage) => this.sessionKeyFor(message),
    };
    for (const record of open) {
      const item = replayItem(record, channels);
      // What came while an approval waited waits again until it is answered.
      if (!this.approvals.holdReplayed(item)) this.enqueue(item);
    }
    this.markReplayQueued();
    // Reminders that came due while the gateway was down fire now (late), after what the journal left open.
    await this.reminders.start();
    // Sub-agent runs a stop or a kill cut short end as owner_restarted, and their parents are told.
    await this.subagents.start();
    this.upkeep.start();
    return this.address;
  }

  /** Takes `<state>/restart.json` (if an in-process restart left one) and warms the sessions it lists. */
  private async warmFromManifest(): Promise<void> {
    const manifest = await takeRestartManifest(stateDirOf(this.options.env), this.options.logger);
    if (!manifest) return;
    this.restartedBy = manifest;
    await warmSessions(
      {
        store: this.store,
        sessions: this.sessions,
        budgetBytes: resumeBudgetBytes(this.options.config.inbound.reply.agent.contextTokens),
        logger: this.options.logger,
      },
      manifest.sessions.map((s) => s.key),
    );
    for (const s of manifest.sessions) this.touched.add(s.key);
  }

  /**
   * The sessions held warm now (busy ones, and those used within passivateAfterMinutes): what an in-process
   * restart puts in its manifest. Sessions that were unloaded (idle) are not listed: they stay cold.
   */
  activeSessions(): { key: string; busy: boolean }[] {
    const active: { key: string; busy: boolean }[] = [];
    for (const key of this.touched) {
      if (!this.sessions.peek(key)) {
        this.touched.delete(key);
        continue;
      }
      active.push({ key, busy: this.queue.isBusy(key) || this.queue.waiting(key) > 0 });
    }
    return active;
  }

  /** Asks whoever runs this gateway (the CLI's serve loop) to stop it, as SIGTERM would. */
  requestStop(request: StopRequest): void {
    this.control.requestStop(request);
  }

  onStopRequest(listener: (request: StopRequest) => void): () => void {
    return this.control.onStopRequest(listener);
  }

  /** Asks whoever runs this gateway for an in-process restart on the config file as it is now. */
  requestRestart(why: string): Promise<RestartAnswer> {
    return this.control.requestRestart(why, this.stopping);
  }

  /** Set by whoever runs the gateway (the CLI's supervisor): how `requestRestart` is answered. */
  handleRestartRequests(handler: (why: string) => Promise<RestartAnswer>): void {
    this.control.handleRestartRequests(handler);
  }

  /** The restart that started this gateway, if it was one: when and why (`/status`, `GET /api/status`). */
  restartInfo(): { at: number; reason: string } | undefined {
    return this.restartedBy ? { at: this.restartedBy.at, reason: this.restartedBy.reason } : undefined;
  }

  /**
   * Drains, then stops (docs/runtime.md, Stopping and restarting): no new turn starts; running turns end at their
   * next safe point (after the tool batch under way) and their person is told `mode` ("stopping", or "restarting"
   * for an in-process restart); after DRAIN_DEADLINE_MS what still runs is aborted. Accepted messages that were
   * not answered stay open in the journal and are answered after the next start.
   */
  stop(options: { mode?: DrainMode } = {}): Promise<void> {
    if (this.stopped) return this.stopped;
    this.stopping = true;
    this.markReplayQueued();
    // No new turn starts, nothing is unloaded or retried any more; running turns end at their next safe point.
    this.runner.drain(options.mode ?? "stopping");
    this.sessions.stop();
    // No reminder fires any more; one being journaled finishes in the "reminders" stage.
    this.reminders.halt();
    // Sub-agent runs end at their next safe point (owner_restarted); their notices go out after the next start.
    this.subagents.halt(DRAIN_DEADLINE_MS);
    // Background jobs are killed in the "jobs" stage; none starts any more.
    this.jobs.halt();
    for (const timer of this.retries) this.clock.clearTimeout(timer);
    this.retries.clear();
    const logger = this.options.logger;
    const abortTurns = () => {
      logger.warn(
        `turns did not reach a safe point within ${DRAIN_DEADLINE_MS / 1000} s: aborting them (their messages are answered after the next start)`,
      );
      this.runner.abortAll("shutdown");
    };
    const stages: ShutdownStage[] = [
      // First, so that its deadline runs from the stop (a stage before it would start the clock late).
      {
        name: "drain",
        run: () => drainWithin(() => this.queue.drain(), abortTurns, DRAIN_DEADLINE_MS, this.clock),
      },
      // The endpoint check in flight ends (its request, or its wait before a retry): a gateway stopping while its
      // model endpoint is down does not wait out the backoff, and logs nothing about it after.
      { name: "model-probe", run: () => this.probe.stop() },
      // A reminder being journaled as the stop came finishes (its turn is then answered after the next start).
      { name: "reminders", run: () => this.reminders.stop() },
      // An upkeep pass under way finishes; title calls in flight are cut short.
      { name: "upkeep", run: () => this.upkeep.stop() },
      { name: "titles", run: () => this.titler.stop() },
      { name: "subagents", run: () => this.subagents.stop() },
      // Background jobs are killed (their process groups) and recorded reaped.
      { name: "jobs", run: () => this.jobs.stop() },
      { name: "recordings", run: () => this.runner.recordingsSettled() },
      { name: "sessions", run: () => this.sessions.settled() },
      // The prompts of turns that parked are journaled and handed to the outbox.
      { name: "approvals", run: () => this.approvals.settled() },
      { name: "session-logs", run: () => this.sessionLogs.flush() },
      // Sends in flight finish (the "stopping" notices among them); what waits for a transport stays in the journal.
      { name: "outbox-settle", run: () => this.outbox.settle(STOP_SEND_GRACE_MS) },
      // A send still in flight finishes and ends its record before the journal closes.
      { name: "outbox", run: () => this.outbox.stop() },
      // No send is in flight any more; what its confirmations file holds is read at the next start.
      { name: "send-thread", run: () => this.sendThread?.close() },
      { name: "host", run: () => this.host.stop() },
      { name: "http", run: () => this.http.close() },
      { name: "temp-files", run: () => this.tempFilesSwept },
      // The journal's close syncs the transcripts behind its replies that no pass synced yet, then marks them.
      { name: "transcript-sync", run: () => this.transcriptSync.stop() },
      { name: "journal", run: () => this.journal.close() },
    ];
    this.stopped = runShutdown(stages, (stage, error) =>
      logger.error(`shutdown stage "${stage}" failed`, { error: String(error) }),
    ).then(() => undefined);
    return this.stopped;
  }

  /** Resolves when no session has work: every turn over, its bookkeeping (the store update) done. */
  async idle(): Promise<void> {
    await this.queue.drain();
    await this.runner.recordingsSettled();
  }

  isStopping(): boolean {
    return this.stopping;
  }

  listeningAddress(): { port: number; host: string } | undefined {
    return this.address;
  }

  onEvent(listener: (event: GatewayEvent) => void): () => void {
    return this.events.on(listener);
  }

  sessionKeyFor(message: InboundMessage): string {
    return sessionKeyFor(message, this.config.inbound.reply.session);
  }

  /**
   * The inbound pipeline (src/routing/inbound-pipeline/): admission (dedupe -> allow -> session key -> journal)
   * decides what this resolves to; dispatch (mention gate with group context -> immediate commands -> enqueue)
   * runs after. `local` messages come from the gateway's own API (already authenticated by token) and get their
   * reply in the returned outcome instead of through a transport.
   */
  async receive(
    message: InboundMessage,
    origin: { local: boolean; internal?: boolean; follow?: WorkItem[] },
  ): Promise<ReceiveResult> {
    const ctx: InboundContext = {
      message,
      local: origin.local,
      ...(origin.internal ? { internal: true } : {}),
      ...(origin.follow?.length ? { follow: origin.follow } : {}),
    };
    await this.admission(ctx);
    const result = ctx.result;
    if (!result) throw new Error("the admission steps decided nothing");
    const item = ctx.item;
    if (result.status === "accepted" && item) {
      if (this.stopping) {
        // Durably accepted: answered after the next start.
        item.resolve(this.runner.outcomeFor(item, "aborted", [], "the gateway is stopping"));
      } else {
        // After what the last run left open (a resumed turn answers before anything newer of its session).
        void this.replayQueued.then(() => this.dispatch(ctx)).catch((error) => this.runner.fail(item, error));
      }
      // Journal before acknowledgement: the transport (or the API caller) hears "received" only once the record is
      // on disk. If that fails the message was not taken: its turn, begun meanwhile, stops before anything of it
      // reaches the person (SessionRunner.refuse), and the caller is told to retry, as for a write that failed.
      try {
        await item.durable;
      } catch (error) {
        this.runner.refuse(item);
        throw error;
      }
    }
    return result;
  }

  /**
   * Hands session `input.sessionKey` an input no transport sent (docs/runtime.md, Internal input): admitted as a
   * message is (journal before this resolves, dedupe) but without a transport's allowlist, with the authority given,
   * and answered in the route's chat (default: the chat the session was last used from) through the outbox.
   * `follow`: items already accepted that are queued right behind it (what waited on an approval's answer).
   * @throws Error when the session has no origin and no route is given.
   */
  async submitInternal(input: InternalInput, follow: WorkItem[] = []): Promise<ReceiveResult> {
    // The session's last turn wrote its origin behind its reply.
    await this.runner.recorded(input.sessionKey);
    const entry = await this.store.get(input.sessionKey);
    const message = internalMessage(input, entry?.origin, this.clock.now(), input.id ?? randomUUID());
    // A chat of a local client (web chat, terminal) has no transport: its reply reaches it as events.
    const local = !this.host.states().some((p) => p.id === message.channel);
    return this.receive(message, { local, internal: true, follow });
  }

  /**
   * Answers the batch parked in session `sessionKey` (a tool gate asked; docs/runtime.md, A tool gate that waits):
   * an internal input of kind `approval-answer` carrying `decisions` (by call id; the owner's authority), whose
   * turn runs the approved calls once, gives a refused one a result saying so, and goes on with the model.
   */
  resumeParked(sessionKey: string, decisions: Record<string, ApprovalDecision>): Promise<ReceiveResult> {
    const summary = Object.entries(decisions)
      .map(([id, d]) => (d.run ? `run ${id}` : `do not run ${id}: ${d.reason}`))
      .join("; ");
    return this.submitInternal({
      sessionKey,
      kind: "approval-answer",
      text: summary || "no decisions",
      authority: "owner",
      decisions,
    });
  }

  private enqueue(item: WorkItem): void {
    // New work keeps the session warm (or loads it again, `recovering` for a replay), and cancels an unloading.
    this.sessions.touch(item.sessionKey, item.restored !== undefined);
    this.touched.add(item.sessionKey);
    if (this.queue.isBusy(item.sessionKey) && !item.contextOnly) {
      this.events.emit({
        type: "processing",
        sessionKey: item.sessionKey,
        state: "queued",
        channel: item.message.channel,
        chatId: item.message.chatId,
        ts: this.clock.now(),
      });
    }
    this.queue.push(item.sessionKey, item);
  }

  private retryLater(item: WorkItem, delayMs: number): void {
    if (this.stopping) return;
    const timer = this.clock.setTimeout(() => {
      this.retries.delete(timer);
      if (!this.stopping) this.enqueue(item);
    }, delayMs);
    this.retries.add(timer);
  }

  /**
   * Resolves once the store updates of the turns that already ended are written (at most 1 s): a reply goes out
   * before its turn's update, so a reader of the store right after a reply (the web chat's context gauge) waits.
   */
  turnsRecorded(): Promise<void> {
    return this.runner.recorded();
  }

  /** `/status` for session `key`; `audience` "group": without local paths and the endpoint URL (status-text.ts). */
  async statusText(key: string, audience: StatusAudience = "direct"): Promise<string> {
    // The session's last turn wrote its usage after its reply went out: /status shows it.
    await this.runner.recorded(key);
    const entry = await this.store.get(key);
    const probe = this.modelProbe.snapshot();
    this.modelProbe.refreshIfStale();
    const restarted = this.restartInfo();
    return statusText({
      version: this.options.version,
      now: this.clock.now(),
      startedAt: this.startedAt,
      ...(restarted ? { restarted } : {}),
      audience,
      sessionKey: key,
      entry,
      storePath: this.store.path,
      contextWindow: this.config.inbound.reply.agent.contextTokens,
      transports: this.host.states(),
      model: probe,
      parked: this.outbox.parked(),
      phase: this.sessions.phaseOf(key),
      busy: this.queue.isBusy(key),
      waiting: this.queue.waiting(key),
      config: this.configState.snapshot(this.clock.now()),
      undelivered: this.outbox.undeliverable(),
      approvals: this.approvals.pending(key).map((a) => ({ what: a.what, ageMs: this.clock.now() - a.at })),
      jobs: this.jobs.running(key),
    });
  }

  /**
   * The send thread (runtime/send-thread/), started once, when the first plugin whose definition says
   * `sendThread` launches; a one-shot run starts none. Whether it was started (tests).
   */
  get sendThreadStarted(): boolean {
    return this.sendThread !== undefined;
  }

  private startSendThread(): void {
    if (this.sendThread || this.options.oneShot) return;
    this.sendThread = new SendThread({
      confirmationsPath: this.journal.confirmationsPath,
      logger: this.options.logger.child("send-thread"),
    });
  }

  isBusy(key: string): boolean {
    return this.queue.isBusy(key);
  }

  /** The turn's tools (src/runtime/tools-policy.ts, `toolsForTurn`), its `remind` tool bound to its chat. */
  toolsFor(key: string, message: InboundMessage): ToolDefinition[] {
    return this.toolsWith(
      key,
      message,
      () => this.reminders.toolFor(key, message),
      () => this.subagents.toolsFor(key, message),
    );
  }

  /** The names of the tools a turn of `key` for `message` is offered (what a job's or a reminder's turn keeps). */
  private toolNames(key: string, message: TurnToolsInput["message"]): string[] {
    return this.toolsWith(key, message, () => remindTool(async () => "not run")).map((tool) => tool.name);
  }

  /** Session `key`'s current id and its paths (session-paths.ts); undefined while it has no entry. */
  private async sessionPathsOf(key: string): Promise<{ sessionId: string; paths: SessionPaths } | undefined> {
    const entry = await this.store.get(key);
    if (!entry) return undefined;
    const roots = sessionRootsOf(this.config, this.store.dir, this.options.workspaceDir);
    return { sessionId: entry.sessionId, paths: sessionPaths(roots, key, entry.sessionId) };
  }

  private toolsWith(
    key: string,
    message: TurnToolsInput["message"],
    remind: () => ToolDefinition,
    subagents: () => ToolDefinition[] = () => [],
  ): ToolDefinition[] {
    return toolsForTurn({
      sessionKey: key,
      primaryKey: this.mainKey,
      message,
      all: () => [
        ...this.jobs.withJobTools(key, message, this.options.builtinTools),
        remind(),
        ...this.host.tools(),
        ...subagents(),
      ],
      tools: this.config.inbound.reply.agent.tools,
      secrets: this.secrets,
    });
  }

  /** The time zone reminders are read in: `gateway.timeZone`, else the machine's. */
  timeZone(): string {
    return effectiveTimeZone(this.config.gateway.timeZone);
  }
}
