import type { TurnResult } from "../../agent/run-turn.js";
import type { GatewayEvent } from "../../plugin-api/types.js";
import type { SessionLog } from "../../sessions/session-log.js";
import type { CompactionEntry, MessageEntry, TranscriptEntry } from "../../sessions/types.js";

/** The longest error text a turn line carries. */
const ERROR_CHARS = 200;

/** Who a turn is for, as its lines name it. */
export interface TurnLogSubject {
  turnId: string;
  channel: string;
  chatId: string;
  senderId: string;
}

/**
 * What one turn writes to its session's log (docs/files.md, The session log): a `model` line per model call
 * (from the assistant messages the turn appends: model, tokens in and out, how many tool calls it asked for), a
 * `tool` line per tool call once its result is in (name, arguments redacted, ok, duration, output size), a
 * `compaction` line per compaction entry, and one `turn` line at its end (channel, chat, sender, duration,
 * tokens in/out, stop reason, rounds). Every line carries the first 8 characters of the turn id. Synchronous:
 * the log writes behind (`SessionLogs`).
 */
export class TurnLog {
  private startedAt = 0;
  private readonly calls = new Map<string, { name: string; args: string; at: number }>();
  private readonly turn: string;

  constructor(
    private readonly log: SessionLog,
    private readonly subject: TurnLogSubject,
    private readonly now: () => number,
  ) {
    this.turn = subject.turnId.slice(0, 8);
  }

  start(): void {
    this.startedAt = this.now();
  }

  /** A tool call (its arguments kept until its result) or a tool result (its line). */
  event(event: GatewayEvent): void {
    if (event.type === "tool-call") {
      this.calls.set(event.callId, {
        name: event.name,
        args: this.log.redactArguments(event.arguments),
        at: this.now(),
      });
    } else if (event.type === "tool-result") {
      const call = this.calls.get(event.callId);
      this.calls.delete(event.callId);
      this.log.line("tool", {
        turn: this.turn,
        name: event.name,
        ok: event.ok,
        durationMs: call ? this.now() - call.at : undefined,
        args: call?.args,
        output: `${event.output.length} chars`,
      });
    }
  }

  /** Entries the turn appended to the transcript: its model calls' messages and its compactions. */
  entries(entries: readonly TranscriptEntry[]): void {
    for (const entry of entries) {
      if (entry.type === "compaction") {
        const c = entry as CompactionEntry & {
          tokensAfter?: number;
          notesBy?: string;
          clearedToolResults?: number;
        };
        this.log.line("compaction", {
          turn: this.turn,
          tokensBefore: c.tokensBefore,
          tokensAfter: c.tokensAfter,
          replaced: c.replacedEntries,
          toolResultsCleared: c.clearedToolResults,
          notesBy: c.notesBy,
        });
      } else if (entry.type === "message") {
        const { message, meta } = entry as MessageEntry;
        if (message.role !== "assistant" || meta?.model === undefined) continue;
        this.log.line("model", {
          turn: this.turn,
          model: meta.model,
          tokensIn: meta.usage?.promptTokens,
          tokensOut: meta.usage?.completionTokens,
          toolCalls: message.tool_calls?.length ?? 0,
          final: meta.final === true ? true : undefined,
        });
      }
    }
  }

  /** The turn's line (no result: it threw). Tool calls that got no result are written first, as not finished. */
  end(result: TurnResult | undefined): void {
    for (const [, call] of this.calls)
      this.log.line("tool", { turn: this.turn, name: call.name, ok: "unfinished", args: call.args });
    this.calls.clear();
    const { channel, chatId, senderId } = this.subject;
    this.log.line("turn", {
      turn: this.turn,
      channel,
      chat: chatId,
      sender: senderId,
      durationMs: this.now() - this.startedAt,
      tokensIn: result?.usage?.promptTokens,
      tokensOut: result?.usage?.completionTokens,
      stop: result?.parked ? "waiting" : (result?.stopReason ?? "error"),
      rounds: result?.rounds,
      error: result?.error?.slice(0, ERROR_CHARS),
    });
  }
}
