import type {
  CompactionEntry,
  GroupContextEntry,
  MessageEntry,
  StoredChatMessage,
  TranscriptEntry,
} from "../sessions/types.js";
import { messageChars, noteChars } from "./estimate-tokens.js";
import { notesMessage } from "./plan-compaction.js";
import { directSender, internalLabel, labelsDirectMessages, senderLabel } from "./sender-label.js";

/** How many unaddressed group messages in a row are shown to the model, by default (the newest ones). */
export const DEFAULT_GROUP_HISTORY_LIMIT = 50;

/**
 * The messages a turn sends to the model: the system prompt, the notes of the newest compaction (a user-role
 * message) and the messages
 * it kept, then every message entry after it. Pure.
 * - In group chats the model is told who said what: a person's message reads `Name: text`, and a run of group
 *   messages that did not address the agent (`group-context` entries) becomes one user message listing the
 *   newest `groupHistoryLimit` of them.
 * - Direct messages read `Name: text` too when they come from more than one person among the entries sent
 *   (`labelsDirectMessages`, sender-label.ts: two allowed senders sharing the primary session).
 * - Input the core handed in (a reminder, a job's result, …) reads `[kind] text` (`internalLabel`), in any chat.
 * - A person's message whose turn failed (a `turn-failed` entry names it: no model, endpoint down, a timeout) is
 *   history, not a question: it is marked so, and the model is not asked to answer a pile of stale messages.
 * - An automated turn a person's message ended (a `turn-interrupted` entry) is followed by its note, a user-role
 *   message saying it stopped unfinished.
 * Invariant: every assistant tool call is followed by a result for it before the next non-tool message; a call
 * left without one (the gateway stopped mid-turn) gets a synthetic "interrupted" result, in the request only.
 * A new array every call. From SCAN_KEPT_FROM entries on, the build is kept by the tail's first entry and the next
 * call on the same tail grown adds only the entries since (`ContextScan`): the same result as a fresh build.
 */
export function buildContext(input: {
  systemPrompt: string;
  compaction?: CompactionEntry;
  entries: TranscriptEntry[];
  groupHistoryLimit?: number;
}): StoredChatMessage[] {
  const { entries } = input;
  const limit = input.groupHistoryLimit ?? DEFAULT_GROUP_HISTORY_LIMIT;
  let scan = entries.length >= SCAN_KEPT_FROM ? scans.get(entries[0] as TranscriptEntry) : undefined;
  if (scan === undefined || !goesOn(scan, input, limit)) {
    scan = newScan(input, limit);
    if (entries.length >= SCAN_KEPT_FROM) scans.set(entries[0] as TranscriptEntry, scan);
  }
  scanTo(scan, entries);
  const messages = scan.messages.slice();
  const run = contextMessage(scan.context, limit);
  if (run) messages.push(run);
  // Without a tool call or result there is nothing to pair (most contexts of a chat): no second array.
  if (scan.tools) return pairToolCalls(messages);
  noteChars(messages, scan.chars + (run ? messageChars(run) : 0));
  return messages;
}

/**
 * Below this many entries a context is built afresh each time (cheap); from it on, what was built is kept by the
 * tail's first entry and the next turn, on the same tail grown, only adds the entries that came since.
 */
export const SCAN_KEPT_FROM = 32;

/**
 * A context built up to an entry: the same messages a fresh build of `entries[0..scanned)` gives, but with the
 * trailing run of unaddressed group messages not yet made into its message (the next entries may lengthen it).
 * Entries are never changed once read; a tail grows by appending, so a build of the same tail grown goes on from
 * here, unless an entry since changes how an earlier one is shown (a `turn-failed`, a second direct sender).
 */
interface ContextScan {
  systemPrompt: string;
  compaction: CompactionEntry | undefined;
  limit: number;
  scanned: number;
  /** `entries[scanned - 1]` when scanned. */
  last: TranscriptEntry | undefined;
  messages: StoredChatMessage[];
  context: GroupContextEntry[];
  /** The journal ids of messages whose turn failed, among all the entries the scan was started on. */
  failed: Set<string>;
  /** Whether direct messages were labelled, once a direct message asked (`labelsDirectMessages`). */
  labelDirect: boolean | undefined;
  /** A tool call or result is among `messages`. */
  tools: boolean;
  /** `messageChars` of `messages`, summed (estimate-tokens.ts). */
  chars: number;
}

const scans = new WeakMap<TranscriptEntry, ContextScan>();

function newScan(input: Parameters<typeof buildContext>[0], limit: number): ContextScan {
  const messages: StoredChatMessage[] = [{ role: "system", content: input.systemPrompt }];
  if (input.compaction) {
    if (input.compaction.notes) messages.push(notesOf(input.compaction));
    messages.push(...(input.compaction.kept ?? []));
  }
  const failed = new Set<string>();
  for (const entry of input.entries) {
    // The type first: most entries are messages, which have no `journalId` of their own (a slow missing lookup).
    if (entry.type !== "turn-failed") continue;
    const jid = (entry as { journalId?: unknown }).journalId;
    if (typeof jid === "string") failed.add(jid);
  }
  return {
    systemPrompt: input.systemPrompt,
    compaction: input.compaction,
    limit,
    scanned: 0,
    last: undefined,
    messages,
    context: [],
    failed,
    labelDirect: undefined,
    tools: messages.some(hasTools),
    chars: messages.reduce((sum, m) => sum + messageChars(m), 0),
  };
}

/** Whether `scan` is a build of the start of `input.entries` that the entries after it leave as it is. */
function goesOn(scan: ContextScan, input: Parameters<typeof buildContext>[0], limit: number): boolean {
  const { entries } = input;
  if (
    scan.systemPrompt !== input.systemPrompt ||
    scan.compaction !== input.compaction ||
    scan.limit !== limit
  )
    return false;
  // The entry last looked at still in its place (a shorter tail has none there).
  if (entries[scan.scanned - 1] !== scan.last) return false;
  for (let i = scan.scanned; i < entries.length; i++) {
    // A failed turn marks a message that may be before it: every message is looked at again.
    if ((entries[i] as TranscriptEntry).type === "turn-failed") return false;
  }
  return scan.labelDirect === undefined || labelsDirectMessages(entries) === scan.labelDirect;
}

/** Adds `entries[scan.scanned..]` to the scan. */
function scanTo(scan: ContextScan, entries: TranscriptEntry[]): void {
  const seen: Seen = {
    failed: scan.failed,
    labelDirect: () => {
      scan.labelDirect ??= labelsDirectMessages(entries);
      return scan.labelDirect;
    },
  };
  const { messages } = scan;
  for (; scan.scanned < entries.length; scan.scanned++) {
    const entry = entries[scan.scanned] as TranscriptEntry;
    scan.last = entry;
    if (entry.type === "turn-interrupted") {
      // An automated turn a person ended: the model is told it stopped unfinished (runtime/authority).
      const note = (entry as { note?: unknown }).note;
      if (typeof note === "string") {
        flushContext(scan);
        const shown = interruptedNoteMessage(entry, note);
        scan.chars += messageChars(shown);
        messages.push(shown);
      }
      continue;
    }
    if (entry.type === "group-context") {
      const c = entry as GroupContextEntry;
      if (typeof c.text === "string" && typeof c.senderId === "string") scan.context.push(c);
      continue;
    }
    if (entry.type !== "message") continue;
    const message = (entry as { message?: StoredChatMessage }).message;
    if (!message || typeof message.role !== "string") continue;
    if (message.role === "system") continue;
    flushContext(scan);
    const shown = asSeen(entry as MessageEntry, seen);
    if (!scan.tools && hasTools(shown)) scan.tools = true;
    scan.chars += messageChars(shown);
    messages.push(shown);
  }
}

function hasTools(message: StoredChatMessage): boolean {
  return message.role === "tool" || message.tool_calls !== undefined;
}

/** The trailing run of unaddressed group messages becomes its message in the scan. */
function flushContext(scan: ContextScan): void {
  const run = contextMessage(scan.context, scan.limit);
  if (!run) return;
  scan.messages.push(run);
  scan.chars += messageChars(run);
  scan.context = [];
}

/** A run of group messages that did not address the agent, as one user message of the newest `limit`. */
function contextMessage(context: GroupContextEntry[], limit: number): StoredChatMessage | undefined {
  if (context.length === 0) return undefined;
  const shown = context.slice(-limit);
  const lines = shown.map((c) => `${c.senderName ?? c.senderId}: ${c.text}`);
  const skipped = context.length - shown.length;
  return {
    role: "user",
    content: `[Messages in the group that were not addressed to you${skipped > 0 ? ` (the newest ${shown.length} of ${context.length})` : ""}; for context, no answer needed]\n${lines.join("\n")}`,
  };
}

/** The note of a `turn-interrupted` entry: one object per entry (as `notesOf`, for request-body.ts's reuse). */
const interruptedNotes = new WeakMap<TranscriptEntry, StoredChatMessage>();
function interruptedNoteMessage(entry: TranscriptEntry, note: string): StoredChatMessage {
  let message = interruptedNotes.get(entry);
  if (!message) {
    message = { role: "user", content: note };
    interruptedNotes.set(entry, message);
  }
  return message;
}

/**
 * The notes message of a compaction entry: one object per entry, so that every turn after it starts its context
 * with the same message (request-body.ts keys what it reuses by that message).
 */
const notesMessages = new WeakMap<CompactionEntry, StoredChatMessage>();
function notesOf(compaction: CompactionEntry & { notes: string }): StoredChatMessage {
  let message = notesMessages.get(compaction);
  if (!message) {
    message = notesMessage(compaction.notes);
    notesMessages.set(compaction, message);
  }
  return message;
}

/**
 * The labelled form (`Name: text`, groups and shared direct chats) of each person's message entry, made once per
 * entry: every turn's context then
 * holds the same object for it, as it does for every other message (request-body.ts reuses the bytes of a
 * message it sent before when it is the same object), instead of a new object and string per message per turn.
 * Kept while the entry lives (the session's tail), collected with it. Transcript entries are not changed once
 * read.
 */
const groupForms = new WeakMap<MessageEntry, StoredChatMessage>();

/** What decides how a person's message is shown, for one context. */
interface Seen {
  /** The journal ids of messages whose turn failed. */
  failed: ReadonlySet<string>;
  /** Direct messages carry their sender's name (more than one person among them); worked out at the first ask. */
  labelDirect: () => boolean;
}

/** A person's message as the model sees it: who said it (groups, shared direct chats), and whether it went unanswered. */
function asSeen(entry: MessageEntry, how: Seen): StoredChatMessage {
  const { message, meta } = entry;
  if (message.role !== "user" || typeof message.content !== "string") return message;
  const jid = how.failed.size > 0 ? meta?.journalId : undefined;
  const unanswered = typeof jid === "string" && how.failed.has(jid);
  const internal = internalLabel(meta);
  const labelled =
    internal !== undefined ||
    meta?.chatType === "group" ||
    (directSender(entry) !== undefined && how.labelDirect());
  if (!labelled && !unanswered) return message;
  const cached = unanswered ? undefined : groupForms.get(entry);
  if (cached) return cached;
  let content = message.content;
  if (internal !== undefined) content = `${internal} ${content}`;
  else if (labelled) content = `${senderLabel(meta)}: ${content}`;
  if (unanswered) {
    content = `[Earlier message that was not answered at the time (the turn failed); history, not a question to answer now]\n${content}`;
  }
  const seen = { ...message, content };
  if (!unanswered) groupForms.set(entry, seen);
  return seen;
}

/** Adds a synthetic result after each tool call that has none, and drops results that answer no call. */
export function pairToolCalls(messages: StoredChatMessage[]): StoredChatMessage[] {
  const out: StoredChatMessage[] = [];
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    for (const id of pending) {
      out.push({ role: "tool", tool_call_id: id, content: "(no result: the turn was interrupted)" });
    }
    pending = [];
  };
  for (const message of messages) {
    if (message.role === "tool") {
      const index = message.tool_call_id ? pending.indexOf(message.tool_call_id) : -1;
      if (index === -1) continue;
      pending.splice(index, 1);
      out.push(message);
      continue;
    }
    flush();
    out.push(message);
    if (message.role === "assistant" && message.tool_calls) pending = message.tool_calls.map((c) => c.id);
  }
  flush();
  return out;
}
