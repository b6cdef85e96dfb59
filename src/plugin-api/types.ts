// Over 400 lines, by design: this is the whole plugin contract in one file (types only, no code), so that a plugin
// author reads one page and the contract's version (PLUGIN_API_VERSION) covers one file.
import type { z } from "zod";
import type { Logger } from "../core/logger.js";

/**
 * Bumped on any incompatible change to this module; plugins declare the version they were written for.
 * 2: attachments carry a local `path` (no `url`), `fail(error, { retryAfterMs })`, plugin-owned config
 * sections, turn lifecycle events with channel and chat; later, optional members only: `reload` and
 * `configChanged` (config hot reload), `authority` on `authorize`'s answer, `files` on the tool context,
 * `cliCommands` (commands of the command line). The host still loads plugins written for 1.
 */
export const PLUGIN_API_VERSION = 2;
/** The versions the host loads. */
export const SUPPORTED_PLUGIN_API_VERSIONS: readonly number[] = [1, 2];

export type ChatType = "direct" | "group";

export type AttachmentKind = "image" | "audio" | "voice" | "video" | "document" | "sticker" | "other";

/**
 * A file that came with an inbound message. The plugin downloads it into its staging area
 * (`context.stagingDir`) before handing the message in; the gateway moves it into the session's workspace and
 * tells the model where it lies. Never a URL: inbound messages are persisted, and a download URL may carry a
 * bot token.
 */
export interface Attachment {
  kind: AttachmentKind;
  /** Absolute path of the downloaded file, inside `context.stagingDir`. Absent: not downloaded (too large…). */
  path?: string;
  mimeType?: string;
  fileName?: string;
  sizeBytes?: number;
  caption?: string;
  /** Why the file is not there (e.g. "larger than telegram.mediaMaxMb"), for the model. */
  note?: string;
}

/** A file the agent sends with its reply (the `send_file` tool). */
export interface OutboundAttachment {
  kind: AttachmentKind;
  /** Absolute path of the file to send. */
  path: string;
  mimeType?: string;
  fileName?: string;
  caption?: string;
}

/** The message a message replies to (a quoted reply), as far as the transport knows it. */
export interface ReplyContext {
  /** The transport's own id of the quoted message. */
  messageId: string;
  text?: string;
  senderId?: string;
  senderName?: string;
  /** The quoted message is one of the agent's own. */
  fromAgent?: boolean;
}

/**
 * Who an input is from (SPEC section 7, Authority), the one field that carries it:
 * - `owner`: the person the agent works for (the transport's owner ids; local clients holding the gateway token);
 * - `allowed`: someone the transport's allowlist names, who may talk to the agent;
 * - `untrusted`: someone let in only by where they write (a member of an allowed group, anyone under `"*"`);
 * - `automated`: no person (webhooks).
 * Tools follow it: the primary session's tools run only for the owner (docs/agent.md, Who gets tools).
 */
export type Authority = "owner" | "allowed" | "untrusted" | "automated";

/**
 * The one normalized inbound message. Every transport turns its SDK's events into this, once, at the edge;
 * the core never sees a transport's own types.
 */
export interface InboundMessage {
  /** The transport's plugin id, e.g. "telegram"; or a local client label such as "webchat", "cli". */
  channel: string;
  /** Chat to reply to, in the transport's own id space (Telegram chat id, WhatsApp jid, …). */
  chatId: string;
  chatType: ChatType;
  senderId: string;
  senderName?: string;
  /** Unique within `channel`; the dedupe key together with it (e.g. a Telegram update id). */
  messageId: string;
  /** The transport's own id of the message, to reply to or quote (default `messageId`). */
  transportMessageId?: string;
  /** The message this one replies to. */
  replyTo?: ReplyContext;
  text: string;
  attachments?: Attachment[];
  /** The bot was mentioned (group chats). */
  mentioned?: boolean;
  /** Epoch ms when the transport received it. */
  receivedAt: number;
  /** Automated input (webhooks): never joins a running turn, always waits for its own. */
  automated?: boolean;
  /**
   * Automated input only: the tools the agent may use on it (names, or "*"), as the plugin's config grants
   * them. Absent: none. Messages from people get the tools of their session (`inbound.reply.agent.tools`).
   */
  allowedTools?: string[];
  /** Route to this session key instead of the computed one (webhooks, `clawdis agent --session`). */
  sessionKey?: string;
  /**
   * Set by the gateway when it accepts the message, and kept with it in the journal (a turn run again after a
   * restart keeps the authority it started with): the transport's `authorize` verdict, `owner` for the gateway's
   * own API, `automated` for automated input. Whatever a plugin puts here is replaced.
   */
  authority?: Authority;
  /**
   * Set by the core on input no transport sent (`Gateway.submitInternal`: a reminder, a job's result, a
   * sub-agent's notice, an approval's answer, whose `decisions` say which parked calls run); the model sees it
   * labelled by its kind. Whatever a plugin puts here is removed.
   */
  internal?: { kind: InternalKind; decisions?: Record<string, ApprovalDecision> };
}

/** An approval's answer for one parked tool call (by call id): run it, or not (the model is told `reason`). */
export type ApprovalDecision = { run: true } | { run: false; reason: string };

/** What kind of input the core hands a session without a transport (see `InboundMessage.internal`). */
export type InternalKind = "reminder" | "job-result" | "subagent-notice" | "approval-answer";

export interface OutboundMessage {
  channel: string;
  chatId: string;
  /** The kind of chat, as the inbound message said (absent for replies restored from before 2). */
  chatType?: ChatType;
  text: string;
  /** The transport's own id of the inbound message this answers, when the transport can quote it. */
  replyToMessageId?: string;
  /** `reply`: the agent's answer; `notice`: a one-line note from the gateway (confirmations, errors). */
  kind: "reply" | "notice";
  /** Files to send with this part (only ever on the last part of a split reply). */
  attachments?: OutboundAttachment[];
  /**
   * Buttons under the message (an approval's prompt: docs/tools.md). A transport that has buttons shows them;
   * pressing one hands in `data` as a message of the presser's in that chat (and the transport answers the press).
   * A transport without buttons sends the text alone, which says how to answer in words.
   */
  buttons?: OutboundButton[];
  /** This message settles the buttons the transport last sent to this chat: a transport with buttons removes them. */
  closesButtons?: boolean;
}

/** One button under a message: its label, and the text a press hands in. */
export interface OutboundButton {
  text: string;
  data: string;
}

/**
 * What the core reads of an error thrown by `Transport.send` (any Error may carry these fields). Contract:
 * - `permanent: true`: the chat refuses this message for good (it does not exist, the bot was blocked or removed
 *   from it, the message can never be taken as it is); the reply is not tried again;
 * - otherwise the failure passes (a 5xx, a network error, a rate limit, the transport restarting) and the message
 *   is tried again until it is delivered; `retryAfterMs` is the least wait before the next try (a 429's
 *   retry_after).
 */
export interface SendFailure {
  permanent?: boolean;
  retryAfterMs?: number;
}

export interface SendResult {
  messageId?: string;
}

export interface TransportCapabilities {
  /** Longest text one send may carry; longer replies are split by the core (or by `split`). */
  maxTextLength: number;
  /** Whether `send` delivers `attachments`; without it a reply's files are named in its text. */
  attachments?: boolean;
}

export type HealthState = "starting" | "ok" | "degraded" | "down" | "stopped";

export interface TransportHealth {
  state: HealthState;
  /** One line for `/status`, e.g. "linked, credentials refreshed 3m ago". */
  detail?: string;
}

/**
 * Whether a sender may talk to the agent, and with what authority. Deny by default: a transport allows only what
 * its config lists. `authority` absent: `allowed` (the sender talks; the primary session's tools are the
 * owner's). A transport says `owner` for its owner ids (`inbound.owner.<id>`, or its own default), `untrusted`
 * for a sender let in only by the chat they write in or by `"*"`. `automated` is not a transport's to give:
 * it comes from `InboundMessage.automated`.
 */
export type AuthorizeResult =
  | { allowed: true; authority?: Exclude<Authority, "automated"> }
  | { allowed: false; reason: string };

export interface Transport {
  capabilities: TransportCapabilities;
  authorize(message: InboundMessage): AuthorizeResult;
  /**
   * Delivers one message; must honour `signal` (the send watchdog and gateway stop). A throw is read as a
   * SendFailure: unless it says `permanent: true`, the same message is tried again (after its `retryAfterMs`, else
   * with a growing backoff) for as long as it takes, in order with the rest of the chat's replies, and while the
   * transport is not up it waits for it. A permanent failure ends the reply (logged, listed in `/status`).
   *
   * `confirmed` (optional to call): the moment the chat app has answered that it took the message (its answer's
   * status, before the rest is read), call it, once. The core records the delivery in that call, so a kill -9
   * after it does not send the message again; from then on the message counts as delivered, and a throw after it
   * is logged, not retried. Call it for the last request of a message only (after a text's files, if it has any).
   * A transport that never calls it has its message recorded once the promise resolves.
   */
  send(message: OutboundMessage, signal: AbortSignal, confirmed?: () => void): Promise<SendResult>;
  /**
   * Splits a reply into sendable parts when the transport's rendering changes lengths (Markdown to its own
   * format). Must be deterministic: a restart splits the same text the same way and skips parts already sent.
   * Absent: the core's fence-aware split at `maxTextLength`.
   */
  split?(text: string): string[];
  health?(): TransportHealth;
}

/** A tool the agent can call. `parameters` is a JSON Schema object. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  execute(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult>;
}

export interface ToolContext {
  /** Aborted by the tool watchdog, `/stop` and gateway stop. */
  signal: AbortSignal;
  /** Adds a file to the reply of this turn (sent with it when the turn ends with a reply). */
  attach?(attachment: OutboundAttachment): void;
  /** The session's working directory. */
  cwd: string;
  /**
   * Where file tools may go on this call; set by the gateway on every call it makes (docs/agent.md, Tools). A
   * tool that takes paths resolves them with symlinks followed and refuses what this does not allow.
   */
  files?: ToolFileAccess;
  sessionKey: string;
  /** Milliseconds this call may take (the tool watchdog). */
  timeoutMs: number;
  /**
   * Says the call is still making progress (a chunk of output, a streamed item): the tool watchdog starts over,
   * so a call that keeps producing is not ended at `toolExecutionSeconds`, while one that goes silent is.
   * Absent where no watchdog runs; tools call it as `context.progress?.()`.
   */
  progress?(): void;
}

/** The paths a tool call may use: see `ToolContext.files`. */
export interface ToolFileAccess {
  /**
   * When set, every path must resolve (symlinks followed, `..` applied) inside this folder, the session's
   * workspace: outside the primary session, and for anyone but the owner. Absent: anywhere but `secrets`.
   */
  confinedTo?: string;
  /** Files and folders no tool call reads, writes or sends, whoever asks: the state directory's secrets. */
  secrets: readonly { path: string; what: string }[];
}

export interface ToolResult {
  ok: boolean;
  /** What the model sees. */
  output: string;
}

/** Handed back by `receive`: whether the gateway took the message, and when its turn is over. */
export type ReceiveResult =
  | { status: "accepted"; journalId: string; done: Promise<TurnOutcome> }
  | { status: "duplicate" }
  | { status: "denied"; reason: string };

export type StopReason = "end" | "tool-loop" | "timeout" | "output-limit" | "aborted" | "error";

/** How the turn that answered a message ended. */
export interface TurnOutcome {
  sessionKey: string;
  sessionId: string;
  /** The texts sent back (the reply, or the notice for commands and failures). */
  payloads: { text: string }[];
  /** `waiting`: the turn parked at a tool call that waits for an answer (its record stays open). */
  stopReason: StopReason | "command" | "filtered" | "waiting";
  model?: string;
  usage?: { promptTokens?: number; completionTokens?: number; totalTokens?: number };
  durationMs: number;
  error?: string;
}

/** Everything the gateway tells observers (web chat streams, the terminal chat). */
export type GatewayEvent =
  | {
      type: "message";
      sessionKey: string;
      role: "user" | "assistant";
      text: string;
      channel?: string;
      chatId?: string;
      /** The journal record of a person's message. */
      journalId?: string;
      /** Set when the message joined a running turn. */
      turnId?: string;
      ts: number;
    }
  /**
   * `journalId`: the message whose turn this is. `channel`/`chatId`: the chat it answers (a transport runs its
   * typing indicator on these); `replay`: a message left open by the previous run.
   */
  | {
      type: "turn-start";
      sessionKey: string;
      turnId: string;
      journalId: string;
      channel: string;
      chatId: string;
      replay?: boolean;
      ts: number;
    }
  | { type: "delta"; sessionKey: string; turnId: string; text: string }
  /** Reasoning text the model streams (not part of the reply). */
  | { type: "thinking"; sessionKey: string; turnId: string; text: string }
  /** What the session is doing now; `idle` after every turn, however it ended. */
  | {
      type: "processing";
      sessionKey: string;
      state: "queued" | "thinking" | "tool" | "sending" | "idle";
      channel?: string;
      chatId?: string;
      ts: number;
    }
  | {
      type: "usage";
      sessionKey: string;
      turnId: string;
      promptTokens: number;
      completionTokens: number;
      contextTokens: number;
      estimated: boolean;
    }
  | { type: "file"; sessionKey: string; turnId: string; path: string; kind: AttachmentKind }
  | { type: "tool-call"; sessionKey: string; turnId: string; callId: string; name: string; arguments: string }
  | {
      type: "tool-result";
      sessionKey: string;
      turnId: string;
      callId: string;
      name: string;
      ok: boolean;
      output: string;
    }
  /** Every turn-start gets exactly one turn-end, however the turn ends (an error, a stop, a shutdown). */
  | {
      type: "turn-end";
      sessionKey: string;
      turnId: string;
      stopReason: StopReason;
      /** The turn parked at a tool call that waits for the person's approval (docs/tools.md). */
      parked?: boolean;
      channel: string;
      chatId: string;
      ts: number;
    }
  /**
   * A note from the gateway. `buttons`: an approval's prompt (docs/tools.md), whose buttons a chat view may show
   * (a press sends `data` as the person's message); `closesButtons`: the approval is decided, its buttons go.
   */
  | {
      type: "notice";
      sessionKey: string;
      text: string;
      ts: number;
      buttons?: OutboundButton[];
      closesButtons?: boolean;
    }
  /**
   * The key now holds a new session (`/new`, idle expiry, its first message, a deleted transcript): a chat view
   * shows the new, empty conversation. Sent before anything of the new session.
   */
  | {
      type: "session";
      sessionKey: string;
      sessionId: string;
      reason: "new-key" | "reset" | "idle" | "daily" | "transcript-missing";
      ts: number;
    };

export type HttpMethod = "GET" | "POST" | "PUT" | "DELETE";

export interface HttpRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  /** Remote address, e.g. "127.0.0.1". */
  remoteAddress: string;
  /** Whether the request carried the gateway token (or the route's own token). */
  authorized: boolean;
  /** Parameters from `:name` segments of the route path. */
  params: Record<string, string>;
  body(): Promise<string>;
  /** Aborted once the response closed: sent, or the client went away. */
  signal: AbortSignal;
}

/** A route handler writes to the raw Node response; the server closes it if the handler throws. */
export type HttpHandler = (req: HttpRequest, res: import("node:http").ServerResponse) => void | Promise<void>;

export interface HttpRouteOptions {
  /** Default true: the gateway token is required. Public routes (the web chat page) say false. */
  auth?: boolean;
}

export interface HttpRegistrar {
  route(method: HttpMethod, path: string, handler: HttpHandler, options?: HttpRouteOptions): void;
}

/**
 * What plugins may read of the core's own config (`context.gatewayConfig`): these keys, validated, with their
 * defaults filled in. The rest of `clawdis.json` is not part of the contract; a plugin's own settings come in
 * `context.config`.
 */
export interface PluginCoreConfig {
  inbound: {
    /** `inbound.allowFrom`: E.164 numbers allowed in direct chats, or `"*"` for everyone (WhatsApp). */
    allowFrom: string[];
    /** `inbound.owner`: plugin id → the owner's ids in that transport's own terms; a plugin not listed: absent. */
    owner: Record<string, string[]>;
    groupChat: {
      /** `inbound.groupChat.mentionPatterns`: regular expressions (source text) that count as a mention. */
      mentionPatterns: string[];
    };
    reply: {
      session: {
        /** `global`: every chat shares one session, `global`. */
        scope: "per-sender" | "global";
        /** The primary session's key. */
        mainKey: string;
      };
      agent: {
        /** The model's context window, in tokens. */
        contextTokens: number;
      };
    };
  };
}

/** What the gateway gives a plugin. */
export interface PluginContext<C = unknown> {
  id: string;
  /**
   * The plugin's own settings: its config section (`configSection`, e.g. `telegram`) when it declares one,
   * else `plugins.entries.<id>.config`; validated by its schema. Always the current settings: after a config
   * change applied live (see `PluginDefinition.reload`) it holds the new ones, so read the keys you declare live
   * from here at each use rather than keeping a copy.
   */
  config: C;
  /** The core's config as plugins see it (`PluginCoreConfig`), read-only; like `config`, always the current one. */
  gatewayConfig: Readonly<PluginCoreConfig>;
  /** The gateway's state directory. */
  stateDir: string;
  /** This plugin's own directory (`<state>/plugins/<id>/`, 0700, created before `create`), kept across restarts. */
  pluginStateDir: string;
  /** Where inbound attachments are downloaded to before the message is handed in (0700, inside pluginStateDir). */
  stagingDir: string;
  /** The session every direct chat lands in (`mainKey`, or `global` under `scope: "global"`). */
  primarySessionKey: string;
  logger: Logger;
  /** Hands one inbound message to the gateway. Resolves once it is durably accepted, or filtered. */
  receive(message: InboundMessage): Promise<ReceiveResult>;
  /** Subscribes to gateway events; returns the unsubscribe function. */
  onEvent(listener: (event: GatewayEvent) => void): () => void;
  http: HttpRegistrar;
  /** The gateway token (for pages served to loopback clients). */
  gatewayToken: string;
  /**
   * Tells the host this instance broke and cannot recover by itself (connection lost for good, SDK crashed).
   * The host marks the plugin down, calls `stop()`, and creates a fresh instance after a backoff delay —
   * unless the error is fatal (`fatal: true`, or a ClawdisError PLUGIN_INVALID/UNAUTHORIZED/CONFIG_INVALID).
   * Called during `start()`, it fails that start. Calls from an instance that was already replaced are ignored.
   * `retryAfterMs` (e.g. a server's Retry-After) is the least the host waits before the restart; the backoff and
   * a little jitter come on top.
   */
  fail(error: unknown, options?: { retryAfterMs?: number }): void;
}

/** What a plugin's `create` returns. Every member is optional. */
export interface PluginInstance {
  /** Resolves when the plugin is ready; must honour `signal` (the start deadline). */
  start?(signal: AbortSignal): Promise<void>;
  /** Resolves when everything the plugin opened is closed. */
  stop?(): Promise<void>;
  transport?: Transport;
  tools?: ToolDefinition[];
  /**
   * Called after a config change was applied live: `changed` lists every key path that changed and was applied
   * without a restart (`telegram.allowFrom`, `inbound.allowFrom`, …); `context.config` and `gatewayConfig`
   * already hold the new values. For what a plugin derives from them (a warning to give again). Never throws
   * into the gateway: an error is logged.
   */
  configChanged?(changed: readonly string[]): void;
}

/**
 * How a plugin takes a change of `clawdis.json` while the gateway runs. Without it, any change of its own
 * settings restarts it alone (after its sends in flight end; replies meanwhile wait for it), and changes of core
 * keys never do.
 */
export interface PluginReloadPolicy {
  /**
   * Paths below its own settings (its section, or `plugins.entries.<id>.config`) that it reads from
   * `context.config` at each use, so a change applies without a restart: e.g. `["allowFrom", "requireMention"]`.
   * A path covers the keys below it; `"*"` covers all.
   */
  live?: readonly string[];
  /** Core key paths it reads only in `create` (e.g. `inbound.groupChat.mentionPatterns`): a change restarts it. */
  restartOn?: readonly string[];
}

export interface PluginConfigSection<C = unknown> {
  /** The top-level key, e.g. "telegram". Must not be one of the core's sections. */
  key: string;
  /**
   * Validates the section; must accept `undefined` (the section left out) by giving defaults. Or a function that
   * loads it (`async () => (await import("./config-schema.js")).schema`): the plugin's definition then loads
   * without zod, and a gateway started on a config from the config cache never loads the schema (the built-in
   * plugins do this). The config loader awaits it before it validates anything.
   */
  schema: z.ZodType<C> | (() => Promise<z.ZodType<C>>);
  /** Whether the section asks for the plugin to run (e.g. a bot token is set); default: always. */
  enabled?(config: C): boolean;
  /** One line per key: dotted path below the section and what it means. */
  describe: Record<string, string>;
}

export interface PluginDefinition<C = unknown> {
  apiVersion: number;
  /** Lowercase letters, digits and dashes; also the transport's channel name. */
  id: string;
  version?: string;
  /**
   * Its transport sends replies through `confirmingFetch` (confirming-fetch.ts): the gateway starts the send thread
   * at the first launch of a plugin that says so and keeps it until it stops (a gateway that launches none spends
   * no thread on it). Without it, `confirmingFetch` confirms on the main thread.
   */
  sendThread?: boolean;
  /** Validates `plugins.entries.<id>.config`; absent: the plugin takes no settings. */
  configSchema?: z.ZodType<C>;
  /**
   * A top-level section of `clawdis.json` this plugin owns (e.g. `telegram`), composed into the root schema at
   * load: its keys are validated strictly (an unknown key is a config error, exit 2, with its path), and its
   * settings are the plugin's `context.config`. `describe` documents every key for clawdis.example.json and
   * docs/configuration.md. Takes precedence over `configSchema`.
   */
  configSection?: PluginConfigSection<C>;
  /** How it takes a config change while the gateway runs; absent: any change of its settings restarts it. */
  reload?: PluginReloadPolicy;
  create(context: PluginContext<C>): PluginInstance | Promise<PluginInstance>;
  /**
   * Commands the plugin adds to the `clawdis` command line (e.g. WhatsApp's `clawdis login`), listed in
   * `clawdis --help` after `gateway`. Declare them in a module of their own that loads nothing heavy and import
   * what a command runs inside its `run`: the CLI loads this list only when the command line names no core
   * command. A name that is a core command's, or another plugin's, is refused.
   */
  cliCommands?: readonly PluginCliCommand<C>[];
}

/** An option of a plugin's command, as `clawdis <command> --help` shows it. */
export interface PluginCliOption {
  /** `"--pairing-code <number>"` (takes a value) or `"--force"` (a flag). Long options only. */
  flags: string;
  description: string;
}

/** What a plugin's command gets when it runs. */
export interface PluginCliContext<C = unknown> {
  /** The plugin's own settings, as `PluginContext.config`: the config file was read first (a bad one is exit 2). */
  config: C;
  /** The core keys plugins read, as `PluginContext.gatewayConfig`. */
  gatewayConfig: Readonly<PluginCoreConfig>;
  /** The state directory (`~/.clawdis`, or `CLAWDIS_STATE_DIR`). */
  stateDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Data (what a script would read). */
  stdout(text: string): void;
  /** Everything said to the person: progress, questions, errors. */
  stderr(text: string): void;
  /** Aborted by Ctrl-C (SIGINT) or SIGTERM: close what the command opened and resolve. */
  signal: AbortSignal;
}

/** A command a plugin adds to the `clawdis` command line: `clawdis <name> [options]`. */
export interface PluginCliCommand<C = unknown> {
  /** Lowercase letters, digits and dashes, starting with a letter; not a core command's name. */
  name: string;
  /** One line for `clawdis --help`. */
  description: string;
  options?: readonly PluginCliOption[];
  /**
   * The command needs the state directory to itself (it opens what a running gateway holds, such as the one
   * socket of an account). While a gateway or another command uses the directory it is refused (exit 1) without
   * running; while it runs it holds the directory, so a gateway started meanwhile waits. `gatewayHolds` ends the
   * refusal "a gateway (pid …) runs on <dir> and …; stop it first", e.g. "holds the WhatsApp link".
   */
  exclusive?: { gatewayHolds: string };
  /**
   * Runs the command: `options` by their camel-cased long names (`--pairing-code` is `pairingCode`), a flag as
   * `true`, an option not given absent. Resolves to the exit code (0 done, 1 failed, 2 bad usage).
   */
  run(
    options: Readonly<Record<string, string | boolean | undefined>>,
    context: PluginCliContext<C>,
  ): Promise<number>;
}
