import type { OutboundAttachment, OutboundButton } from "../plugin-api/types.js";

/**
 * What the outbox (outbox.ts) is handed, and how it holds it: a `Delivery` queued in its chat's `Lane`, and what
 * `/status` shows of waiting and given-up deliveries.
 */

/** One reply or notice on its way to a chat. */
export interface Delivery {
  channel: string;
  chatId: string;
  chatType?: "direct" | "group";
  text: string;
  kind: "reply" | "notice";
  replyToMessageId?: string;
  attachments?: OutboundAttachment[];
  /** Buttons under the message, and whether it settles the chat's last buttons (`OutboundMessage`). */
  buttons?: OutboundButton[];
  closesButtons?: boolean;
  /**
   * The journal record this delivery completes (a reply). Its parts are recorded as they reach the chat (so a
   * restart sends only the rest), and the record (with `alsoEnd`, the messages that joined the turn) is ended
   * `replied` after the last one.
   */
  jid?: string;
  alsoEnd?: string[];
  /** Parts that reached the chat before a restart. */
  deliveredParts?: readonly number[];
}

/** How far a delivery got when `enqueue` resolves. */
export type Handed = "sent" | "waiting" | "failed" | "dropped";

export interface Queued {
  delivery: Delivery;
  /** Past the memory bound: the delivery waits on disk under this name (undefined: it could not be written). */
  spilled?: Promise<string | undefined>;
  /** What it holds in memory (counted in the bound). */
  bytes: number;
  /** Resolves `enqueue`'s promise; called once. */
  handed(how: Handed): void;
}

export interface Lane {
  queue: Queued[];
  running: boolean;
  /** Since when the head of the lane has waited for its transport (undefined: not parked). */
  parkedSince?: number;
  /** Waiting out a retry delay after a failed send (nothing in flight). */
  backingOff?: boolean;
  warned?: boolean;
}

/** What `/status` shows per channel. */
export interface ParkedReport {
  channel: string;
  count: number;
  oldestMs: number;
  reported: boolean;
}

/** A delivery given up because its chat refused it for good (`/status`, newest last). */
export interface Undeliverable {
  channel: string;
  chatId: string;
  kind: "reply" | "notice";
  reason: string;
  at: number;
}
