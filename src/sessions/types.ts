/**
 * Persisted shapes: `sessions.json` entries and transcript lines (SPEC section 2).
 * These are formats users and their scripts read; change them only with a migration.
 */

export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high";
export type VerboseLevel = "on" | "off";

/** Where a session's last message came from; replies go back to the chat of each message, not here. */
export interface SessionOrigin {
  channel: string;
  chatId: string;
  chatType: "direct" | "group";
  senderId?: string;
  senderName?: string;
}

/** One value of `sessions.json`. Fields the gateway does not know are kept as they are. */
export interface SessionEntry {
  sessionId: string;
  /** Epoch ms of the last write to this entry (any change). */
  updatedAt: number;
  /** Epoch ms of the last real exchange: a person's message or the agent's reply. Drives idle expiry. */
  lastInteractionAt?: number;
  /** Epoch ms when this sessionId began. */
  createdAt?: number;
  thinkingLevel?: ThinkingLevel;
  verboseLevel?: VerboseLevel;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  /** Prompt tokens of the last model call: the context in use. */
  contextTokens?: number;
  /** True when `contextTokens` is our estimate because the provider sent no usage. */
  contextEstimated?: boolean;
  model?: string;
  compactionCount?: number;
  origin?: SessionOrigin;
  /** The chat the owner last wrote from in this session: an automated turn's approval prompt goes there. */
  ownerChat?: SessionOrigin;
  [field: string]: unknown;
}

/** The store: a plain JSON object `sessionKey -> entry`. */
export type SessionMap = Record<string, SessionEntry>;

export const TRANSCRIPT_VERSION = 1;

/** Line 1 of every transcript. */
export interface TranscriptHeader {
  type: "session";
  version: number;
  id: string;
  sessionKey: string;
  createdAt: string;
  [field: string]: unknown;
}

/** An OpenAI-style tool call as stored. */
export interface StoredToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** An OpenAI-style chat message as stored in a `message` entry. */
export interface StoredChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  name?: string;
  tool_calls?: StoredToolCall[];
  tool_call_id?: string;
}

export interface MessageMeta {
  channel?: string;
  chatId?: string;
  senderId?: string;
  senderName?: string;
  messageId?: string;
  /** Set on messages of group chats: the model is shown who said them. */
  chatType?: "direct" | "group";
  model?: string;
  usage?: { promptTokens?: number; completionTokens?: number; totalTokens?: number };
  [field: string]: unknown;
}

export interface MessageEntry {
  type: "message";
  id: string;
  ts: string;
  message: StoredChatMessage;
  meta?: MessageMeta;
}

export interface CompactionEntry {
  type: "compaction";
  id: string;
  ts: string;
  /** The notes that stand in for every message before this entry that is not in `kept`. */
  notes: string;
  /** The recent messages kept verbatim, copied here so that resuming reads from this entry on, never before it. */
  kept?: StoredChatMessage[];
  /** How many message entries the notes replace. */
  replacedEntries?: number;
  tokensBefore?: number;
}

/**
 * A group message that did not address the agent, kept as context: shown to the model, with who said it, in the
 * next turn of the group's session (at most `inbound.groupChat.historyLimit` of them in a row).
 */
export interface GroupContextEntry {
  type: "group-context";
  id: string;
  ts: string;
  senderId: string;
  senderName?: string;
  text: string;
  meta?: { channel?: string; chatId?: string; messageId?: string; journalId?: string };
}

/**
 * A turn that stopped at a tool call its gate asked about (`TurnResult.parked`): `callIds` are the calls of the
 * batch that did not run and wait for an answer (the asked one and those after it), `journalId` the record that
 * stays open. The batch is resolved once a later final answer follows it.
 */
export interface ToolParkedEntry {
  type: "tool-parked";
  id: string;
  ts: string;
  callIds: string[];
  reason: string;
  journalId?: string;
}

/** Any other entry type (events, directives); readers ignore types they do not know. */
export interface OtherEntry {
  type: string;
  id: string;
  ts: string;
  [field: string]: unknown;
}

export type TranscriptEntry =
  | MessageEntry
  | CompactionEntry
  | GroupContextEntry
  | ToolParkedEntry
  | OtherEntry;
