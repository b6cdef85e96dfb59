import type { z } from "zod";
import type { ClawdisConfig } from "../core/config-schema.js";
import type { Logger } from "../core/logger.js";

/** Bumped on any incompatible change to this module; plugins declare the version they were written for. */
export const PLUGIN_API_VERSION = 1;

export type ChatType = "direct" | "group";

export interface Attachment {
  kind: "image" | "audio" | "video" | "document" | "sticker" | "other";
  mimeType?: string;
  fileName?: string;
  /** Where the bytes can be fetched, when the transport has them. */
  url?: string;
  sizeBytes?: number;
  caption?: string;
}

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
  /** Unique within `channel`; the dedupe key together with it. */
  messageId: string;
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
}

export interface OutboundMessage {
  channel: string;
  chatId: string;
  text: string;
  /** The inbound message this answers, when the transport can quote it. */
  replyToMessageId?: string;
  /** `reply`: the agent's answer; `notice`: a one-line note from the gateway (confirmations, errors). */
  kind: "reply" | "notice";
}

export interface SendResult {
  messageId?: string;
}

export interface TransportCapabilities {
  /** Longest text one send may carry; longer replies are split by the core. */
  maxTextLength: number;
}

export type HealthState = "starting" | "ok" | "degraded" | "down" | "stopped";

export interface TransportHealth {
  state: HealthState;
  /** One line for `/status`, e.g. "linked, credentials refreshed 3m ago". */
  detail?: string;
}

/** Whether a sender may talk to the agent. Deny by default: a transport allows only what its config lists. */
export type AuthorizeResult = { allowed: true } | { allowed: false; reason: string };

export interface Transport {
  capabilities: TransportCapabilities;
  authorize(message: InboundMessage): AuthorizeResult;
  /** Delivers one message; must honour `signal` (the send watchdog and gateway stop). */
  send(message: OutboundMessage, signal: AbortSignal): Promise<SendResult>;
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
  /** The session's working directory. */
  cwd: string;
  sessionKey: string;
  /** Milliseconds this call may take (the tool watchdog). */
  timeoutMs: number;
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
  stopReason: StopReason | "command" | "filtered";
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
  /** `journalId`: the message whose turn this is. */
  | { type: "turn-start"; sessionKey: string; turnId: string; journalId: string; ts: number }
  | { type: "delta"; sessionKey: string; turnId: string; text: string }
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
  | { type: "turn-end"; sessionKey: string; turnId: string; stopReason: StopReason; ts: number }
  | { type: "notice"; sessionKey: string; text: string; ts: number };

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

/** What the gateway gives a plugin. */
export interface PluginContext<C = unknown> {
  id: string;
  /** The plugin's own settings (`plugins.entries.<id>.config`), validated by its configSchema. */
  config: C;
  /** The whole validated gateway config, read-only. */
  gatewayConfig: Readonly<ClawdisConfig>;
  stateDir: string;
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
   */
  fail(error: unknown): void;
}

/** What a plugin's `create` returns. Every member is optional. */
export interface PluginInstance {
  /** Resolves when the plugin is ready; must honour `signal` (the start deadline). */
  start?(signal: AbortSignal): Promise<void>;
  /** Resolves when everything the plugin opened is closed. */
  stop?(): Promise<void>;
  transport?: Transport;
  tools?: ToolDefinition[];
}

export interface PluginDefinition<C = unknown> {
  apiVersion: number;
  /** Lowercase letters, digits and dashes; also the transport's channel name. */
  id: string;
  version?: string;
  /** Validates `plugins.entries.<id>.config`; absent: the plugin takes no settings. */
  configSchema?: z.ZodType<C>;
  create(context: PluginContext<C>): PluginInstance | Promise<PluginInstance>;
}
