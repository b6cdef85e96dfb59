import type { TurnResult } from "../../agent/run-turn.js";
import { describeError } from "../../core/errors.js";
import { touchInteraction } from "../../sessions/lifecycle.js";
import type { SessionEntry } from "../../sessions/types.js";
import { retryDelayMs } from "../transient-error.js";
import type { WorkItem } from "../work-item.js";
import type { SessionPorts } from "./ports.js";

/** How long a reader of a session's entry (its next turn, `/status`) waits for the store update of its last turn. */
const RECORD_WAIT_MS = 1000;

/**
 * Write-behind of the store update after a turn: it may wait this long to share one rewrite of `sessions.json`
 * with the updates of other turns (store-batches.ts; a lone update is written DEFER_QUIET_MS after it). The journal,
 * not the store, holds what was accepted: a crash in this window loses only the turn's bookkeeping (usage, the last
 * exchange's time), never a message.
 */
export const RECORD_DEFER_MS = 1000;

/** How often the store update after a turn is tried before it is given up (the reply is out by then). */
const RECORD_TURN_ATTEMPTS = 5;

/**
 * The store update after each turn (usage, the last exchange, the chat it came from), written behind the reply:
 * the reply, the turn's end, its outcome and the lane never wait for the store's fsync'd rewrite. Tracks every
 * update not written yet, so that readers (`/status`) and a stop can wait for them.
 */
export class TurnBookkeeping {
  /** Every store update after a turn not written yet (`/status` waits for its session's: `recorded`). */
  private readonly recordings = new Set<Promise<void>>();
  /** The same, by session key. */
  private readonly recordingsOf = new Map<string, Set<Promise<void>>>();

  constructor(private readonly ports: SessionPorts) {}

  /** The update of `key` after `item`'s turn, in the background; held by the warm session until written. */
  recordTurnLater(key: string, item: WorkItem, result: TurnResult | undefined): void {
    const recording = this.recordTurnSafely(key, turnRecord(item, result, this.ports.runtime.clock.now()));
    this.recordings.add(recording);
    void recording.finally(() => this.recordings.delete(recording));
    let ofKey = this.recordingsOf.get(key);
    if (!ofKey) {
      ofKey = new Set();
      this.recordingsOf.set(key, ofKey);
    }
    ofKey.add(recording);
    const mine = ofKey;
    void recording.finally(() => {
      mine.delete(recording);
      if (mine.size === 0 && this.recordingsOf.get(key) === mine) this.recordingsOf.delete(key);
    });
    // Held by the warm session until done: its final save waits for it.
    const pending = this.ports.storage.sessions?.peek(key)?.pending;
    pending?.add(recording);
    void recording.finally(() => pending?.delete(recording));
  }

  /**
   * Resolves once the store updates of `key`'s finished turns (no key: of every session's) are written, waiting at
   * most RECORD_WAIT_MS (on the injected clock): a reply goes out before its turn's update, which waits to share a
   * write (RECORD_DEFER_MS), and what `/status` and `GET /api/sessions` read must include it. Any waiting update
   * is written at once. (The session's next turn does not wait: it reads the entry with the update applied,
   * `SessionStore.getWithUpdates`.)
   */
  async recorded(key?: string): Promise<void> {
    const pending = key === undefined ? this.recordings : this.recordingsOf.get(key);
    if (!pending || pending.size === 0) return;
    void this.ports.storage.store.flush();
    let timer: unknown;
    const late = new Promise<void>((resolve) => {
      timer = this.ports.runtime.clock.setTimeout(resolve, RECORD_WAIT_MS);
    });
    await Promise.race([Promise.allSettled([...pending]), late]);
    this.ports.runtime.clock.clearTimeout(timer);
  }

  /**
   * Resolves once every store update after a turn is written (or failed): a stop waits for them, so nothing writes
   * to the store directory once the gateway has stopped. Each is bounded by the store's lock wait.
   */
  async recordingsSettled(): Promise<void> {
    while (this.recordings.size > 0) {
      void this.ports.storage.store.flush();
      await Promise.allSettled([...this.recordings]);
    }
  }

  /**
   * `recordTurn` after the reply went out: bookkeeping never costs the person their answer. A failure is logged
   * and tried again in the background (a few times, growing delays).
   */
  private async recordTurnSafely(key: string, record: TurnRecord): Promise<void> {
    const { logger, clock } = this.ports.runtime;
    const attempt = async (n: number): Promise<void> => {
      try {
        // A retry is written at once: the first try already waited to share a write.
        await this.recordTurn(key, record, n === 1 ? RECORD_DEFER_MS : undefined);
      } catch (error) {
        if (n >= RECORD_TURN_ATTEMPTS) {
          logger.error("could not record the turn on the session entry; gave up", {
            sessionKey: key,
            error: describeError(error),
          });
          return;
        }
        logger.warn("could not record the turn on the session entry; trying again", {
          sessionKey: key,
          attempt: n,
          error: describeError(error),
        });
        clock.setTimeout(() => void attempt(n + 1), retryDelayMs(n));
      }
    };
    await attempt(1);
  }

  /**
   * One store update per message: the person's message and (when there was one) the agent's reply are real
   * exchanges (`lastInteractionAt`); usage and the context in use come from the turn.
   */
  private async recordTurn(key: string, record: TurnRecord, deferMs: number | undefined): Promise<void> {
    const { at, origin, ownerChat, result } = record;
    await this.ports.storage.store.update(
      key,
      (entry) => {
        if (!entry) return entry;
        const next: SessionEntry = {
          ...touchInteraction(entry, at),
          ...(origin ? { origin } : {}),
          ...(ownerChat ? { ownerChat } : {}),
        };
        if (!result) return next;
        next.model = result.model;
        next.contextTokens = result.contextTokens;
        next.contextEstimated = result.contextEstimated;
        if (result.compactions > 0) next.compactionCount = (entry.compactionCount ?? 0) + result.compactions;
        if (result.usage) {
          next.inputTokens = (entry.inputTokens ?? 0) + result.usage.promptTokens;
          next.outputTokens = (entry.outputTokens ?? 0) + result.usage.completionTokens;
          next.totalTokens = (entry.totalTokens ?? 0) + result.usage.totalTokens;
        }
        return next;
      },
      deferMs === undefined ? {} : { deferMs },
    );
  }
}

/**
 * What the store update after a turn writes, taken from the turn when it ends: only these fields (not the work
 * item or the turn's result, which the update may outlive by up to RECORD_DEFER_MS).
 */
interface TurnRecord {
  /** When the turn ended: the exchange's time (`lastInteractionAt`). */
  at: number;
  /** The chat and person the session was last used from; absent for internal input (no person wrote it). */
  origin?: NonNullable<SessionEntry["origin"]>;
  /** The same, when the owner wrote it (`SessionEntry.ownerChat`). */
  ownerChat?: NonNullable<SessionEntry["origin"]>;
  result?: Pick<TurnResult, "model" | "contextTokens" | "contextEstimated" | "compactions" | "usage">;
}

function turnRecord(item: WorkItem, result: TurnResult | undefined, at: number): TurnRecord {
  const m = item.message;
  const origin = m.internal
    ? undefined
    : {
        channel: m.channel,
        chatId: m.chatId,
        chatType: m.chatType,
        senderId: m.senderId,
        ...(m.senderName ? { senderName: m.senderName } : {}),
      };
  const ownerChat = origin && m.authority === "owner" ? { ownerChat: origin } : {};
  if (!result) return { at, ...(origin ? { origin } : {}), ...ownerChat };
  const { model, contextTokens, contextEstimated, compactions, usage } = result;
  return {
    at,
    ...(origin ? { origin } : {}),
    ...ownerChat,
    result: { model, contextTokens, contextEstimated, compactions, ...(usage ? { usage } : {}) },
  };
}
