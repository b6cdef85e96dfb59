import type {
  ApprovalDecision,
  Authority,
  ChatType,
  InboundMessage,
  InternalKind,
} from "../plugin-api/types.js";
import type { SessionOrigin } from "../sessions/types.js";

/** Where the reply to an internal input goes: a chat of a transport (or of a local client). */
export interface InternalRoute {
  channel: string;
  chatId: string;
  chatType: ChatType;
}

/**
 * Input the core hands a session that no transport sent (`Gateway.submitInternal`): a reminder, a job's result, a
 * sub-agent's notice, an approval's answer. `authority`: whom it counts as (`automated` never joins a person's
 * running turn, and gets only `allowedTools`). `route`: the chat the reply goes to; absent, the chat the session
 * was last used from (its entry's `origin`).
 */
export interface InternalInput {
  sessionKey: string;
  kind: InternalKind;
  text: string;
  authority: Authority;
  route?: InternalRoute;
  /** `automated` authority only: the tools the agent may use on it (names, or "*"); absent: none. */
  allowedTools?: string[];
  /**
   * Its id (the message id is `internal:<id>`, the journal's dedupe key): handed in twice, it is taken once.
   * Absent: a new random one.
   */
  id?: string;
  /** `approval-answer` only: which parked calls run (by call id). */
  decisions?: Record<string, ApprovalDecision>;
  /**
   * `approval-answer` only: the person the answer resumes the turn of (their sender id): their messages queued
   * behind it join the resumed turn. Absent: `internalSenderId(kind)`.
   */
  senderId?: string;
}

/** The sender id of internal input of `kind` (no person's id: it never reads as a person's direct message). */
export function internalSenderId(kind: InternalKind): string {
  return `internal:${kind}`;
}

/**
 * The inbound message an internal input becomes, addressed to its route (else the session's `origin`), with a
 * unique `messageId` (`id`), its authority and kind. Throws when there is no chat to reply to. Pure.
 */
export function internalMessage(
  input: InternalInput,
  origin: SessionOrigin | undefined,
  now: number,
  id: string,
): InboundMessage {
  const route = input.route ?? origin;
  if (!route) {
    throw new Error(
      `internal input for session "${input.sessionKey}" has no chat to reply to: the session was never used from a chat (no origin) and no route was given`,
    );
  }
  const automated = input.authority === "automated";
  return {
    channel: route.channel,
    chatId: route.chatId,
    chatType: route.chatType,
    senderId: input.senderId ?? internalSenderId(input.kind),
    messageId: `internal:${id}`,
    text: input.text,
    receivedAt: now,
    sessionKey: input.sessionKey,
    authority: input.authority,
    internal: { kind: input.kind, ...(input.decisions ? { decisions: input.decisions } : {}) },
    ...(automated ? { automated: true } : {}),
    ...(automated && input.allowedTools ? { allowedTools: input.allowedTools } : {}),
  };
}
