import type { InboundMessage } from "../plugin-api/types.js";
import { asMessage, isParked } from "../runtime/session/parked-batch.js";
import type { StoredChatMessage, TranscriptEntry } from "../sessions/types.js";
import type { RunRecord } from "./run-folder.js";

/**
 * How a run found `running` or `parked` at start goes on, from its transcript (docs/tools.md, Sub-agents): `resume`
 * from its messages when its last batch is complete (every call of the last response that asked for tools has its
 * result, and no batch waits parked) or nothing ran yet; `answered` when its last message is a final answer the
 * stop cut off before the run ended; else `incomplete` (a call may have been under way: it ends `owner_restarted`,
 * and no call runs twice). Pure.
 */
export type ResumePoint =
  | { kind: "resume"; messages: StoredChatMessage[] }
  | { kind: "answered"; text: string }
  | { kind: "incomplete" };

export function resumePoint(entries: readonly TranscriptEntry[]): ResumePoint {
  const messages = messagesOf(entries);
  const parkedAt = entries.findLastIndex(isParked);
  const lastMessageAt = entries.findLastIndex((e) => asMessage(e) !== undefined);
  // A parked batch with nothing after it still waits for its answer.
  if (parkedAt !== -1 && parkedAt > lastMessageAt) return { kind: "incomplete" };
  const last = messages.at(-1);
  if (last === undefined || last.role === "user") return { kind: "resume", messages };
  if (last.role === "assistant" && (last.tool_calls ?? []).length === 0) {
    return { kind: "answered", text: typeof last.content === "string" ? last.content : "" };
  }
  const asked = messages.findLastIndex((m) => m.role === "assistant" && (m.tool_calls ?? []).length > 0);
  if (asked === -1) return { kind: "incomplete" };
  const answered = new Set(
    messages.slice(asked + 1).flatMap((m) => (m.role === "tool" ? [m.tool_call_id] : [])),
  );
  const complete = (messages[asked]?.tool_calls ?? []).every((c) => answered.has(c.id));
  return complete ? { kind: "resume", messages } : { kind: "incomplete" };
}

/** The messages among a transcript's entries, in order. Pure. */
export function messagesOf(entries: readonly TranscriptEntry[]): StoredChatMessage[] {
  return entries.flatMap((e) => asMessage(e)?.message ?? []);
}

/**
 * The message the tools policy reads for a resumed run: its requester's channel, sender and authority in the chat
 * the spawn came from (an automated requester keeps the tools it had: `noticeTools`). Pure.
 */
export function requesterMessage(record: RunRecord): InboundMessage {
  const automated = record.requester.authority === "automated";
  return {
    channel: record.requester.channel,
    chatId: record.route.chatId,
    chatType: record.route.chatType,
    senderId: record.requester.senderId,
    messageId: `subagent-${record.id}`,
    text: "",
    receivedAt: 0,
    authority: record.requester.authority,
    ...(automated ? { automated: true, allowedTools: record.noticeTools } : {}),
  };
}
