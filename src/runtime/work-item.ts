import type { InboundMessage, TurnOutcome } from "../plugin-api/types.js";
import type { OpenRecord } from "../sessions/journal.js";

/** One accepted message on its way through a session. */
export interface WorkItem {
  jid: string;
  message: InboundMessage;
  /** The text to act on (a directive prefix already applied and removed). */
  text: string;
  /** From the gateway's own API: the reply travels in the outcome, not through a transport. */
  local: boolean;
  /** Left open by the previous run: resume from its furthest stage. */
  restored?: OpenRecord;
  /** The session key the message routes to. */
  sessionKey: string;
  /** A group message that did not address the agent: kept as context for the group's next answered message. */
  contextOnly?: boolean;
  /** How many times handling it failed for a passing reason (its `retry` settlement, session/settlement.ts). */
  attempt?: number;
  /** Notices sent before the reply (e.g. "a new session began"); local items get them in their payloads. */
  notices?: string[];
  /**
   * Settles once the message's journal record is on disk (fsync'd). Its turn may begin before (the model request
   * goes out while the fsync runs), but nothing of it reaches the person or acts before: a reply, a notice, the
   * model's answer, a tool call (see `taken`, session/apply-settlement.ts). Absent: on disk already (restored, or
   * accepted whole).
   */
  durable?: Promise<void>;
  /** A `/compact`: its lane compacts the session's context instead of running a turn (session-worker compactNow). */
  compact?: boolean;
  /** Set when `durable` failed: the message was not taken after all (the transport was told so). */
  refused?: boolean;
  resolve(outcome: TurnOutcome): void;
}
