import type { LlmClient } from "../../agent/llm-client.js";
import type { TurnHooks } from "../../agent/turn-hooks.js";
import type { Clock } from "../../core/clock.js";
import type { ClawdisConfig } from "../../core/config-schema.js";
import type { Logger } from "../../core/logger.js";
import type { InboundMessage, ToolDefinition } from "../../plugin-api/types.js";
import type { Journal } from "../../sessions/journal.js";
import type { SessionLogs } from "../../sessions/session-log.js";
import type { SessionStore } from "../../sessions/store.js";
import type { EventBus } from "../event-bus.js";
import type { Outbox } from "../outbox.js";
import type { SessionRegistry } from "../session-registry.js";
import type { TranscriptSync } from "../transcript-sync.js";
import type { WorkItem } from "../work-item.js";

/**
 * Everything the session side uses from outside, in five named ports, so that a step names what it touches:
 * where sessions are kept (`storage`), where replies and events go (`delivery`), the model (`model`), the
 * gateway's queue (`queue`), and the gateway's settings, clock and log (`runtime`). One object, passed to every
 * step; nothing below the worker reaches past it.
 */
export interface SessionPorts {
  storage: StoragePort;
  delivery: DeliveryPort;
  model: ModelPort;
  queue: QueuePort;
  runtime: RuntimePort;
}

/** Where sessions are kept: their entries, the journal, transcript durability, the warm sessions. */
export interface StoragePort {
  store: SessionStore;
  journal: Journal;
  /**
   * Decides how a `final` write (a reply, a compaction) is made durable, and syncs behind the transcripts whose
   * replies the journal holds. Present: in a hot session by a journal `reply` record, else by an fsync of the
   * transcript; absent: always by the fsync.
   */
  transcriptSync?: TranscriptSync;
  /**
   * What is held warm per session (the transcript tail, bookkeeping in flight) and each loaded session's phase;
   * absent: nothing is kept.
   */
  sessions?: SessionRegistry;
  /** Where each session's `logs/session.log` is written (turn-log.ts); absent: no session log. */
  sessionLogs?: SessionLogs;
}

/** Where replies, notices and events go. */
export interface DeliveryPort {
  /** Where replies and notices to chats go (parked while their transport is down). */
  outbox: Outbox;
  events: EventBus;
}

/** The model, and what a turn runs with besides it. */
export interface ModelPort {
  llm(): LlmClient | undefined;
  name(): string | undefined;
  /** Resolves when the model is known (it may be the endpoint's only model, found by the first check). */
  ready?(): Promise<void>;
  toolsFor(key: string, message: InboundMessage): ToolDefinition[];
  /** Hooks every turn runs after the built-in ones (a tool gate that asks: `TurnHooks.beforeTool`). */
  turnHooks?: TurnHooks;
  /** The approvals gate of a turn working in `cwd` (runtime/approvals/approval-gate.ts), run before `turnHooks`. */
  approvalGate?(cwd: string): TurnHooks;
}

/** The gateway's session queue, as the session side sees it. */
export interface QueuePort {
  takeJoinable(key: string, predicate: (item: WorkItem) => boolean): WorkItem[];
  isStopping(): boolean;
  /** Runs `item` again after `delayMs` (its journal record stays open; progress is read from the transcript). */
  retryLater(item: WorkItem, delayMs: number): void;
  /** How many messages wait for `key` behind its running turn (a drained turn's resume decision). */
  waiting?(key: string): number;
  /** The first message waiting for `key` that matches, left in its place (an automated turn looks for a person). */
  findWaiting?(key: string, predicate: (item: WorkItem) => boolean): WorkItem | undefined;
}

/** The gateway's settings, clock and log, and the folders sessions work in. */
export interface RuntimePort {
  config: ClawdisConfig;
  /** The config file the gateway reads (full path): the no-model notice names it. */
  configPath(): string;
  clock: Clock;
  logger: Logger;
  workspaceDir: string;
  /** Where plugins stage inbound attachments (`<state>/plugins`); files elsewhere are never moved. */
  stagingRoot: string;
}

/** The session a message was routed to and the id of the conversation it is in. */
export interface SessionIds {
  sessionKey: string;
  sessionId: string;
}
