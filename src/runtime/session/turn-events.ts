import type { TurnResult } from "../../agent/run-turn.js";
import type { GatewayEvent, OutboundAttachment } from "../../plugin-api/types.js";
import type { SessionLog } from "../../sessions/session-log.js";
import type { TranscriptEntry } from "../../sessions/types.js";
import type { WorkItem } from "../work-item.js";
import { tell } from "./apply-settlement.js";
import type { SessionPorts } from "./ports.js";
import { TurnLog } from "./turn-log.js";

/**
 * What watchers see of one turn (typing indicators, the web chat, `clawdis chat --attach`): `turn-start`, the
 * `processing` state, the turn's own events, `usage`, and exactly one `turn-end` per `turn-start`, after the
 * turn's final message. With `verbose`, each tool call is also told to the chat in one line. With a session log
 * (`logTo`), the turn's lines go there too (turn-log.ts).
 */
export class TurnEvents {
  private readonly chat: { channel: string; chatId: string };
  /** Each tool call is told to the chat (the session's `/verbose on`). */
  private verbose = false;
  private log: TurnLog | undefined;
  /** When the turn started (`start`), for its duration. */
  private startedAt = 0;

  constructor(
    private readonly ports: SessionPorts,
    private readonly key: string,
    private readonly item: WorkItem,
    readonly turnId: string,
  ) {
    this.chat = { channel: item.message.channel, chatId: item.message.chatId };
  }

  /** The turn's lines go to `log` (set before `start`). */
  logTo(log: SessionLog): void {
    this.log = new TurnLog(
      log,
      {
        turnId: this.turnId,
        channel: this.item.message.channel,
        chatId: this.item.message.chatId,
        senderId: this.item.message.senderId,
      },
      () => this.ports.runtime.clock.now(),
    );
  }

  start(verbose: boolean): void {
    this.verbose = verbose;
    this.startedAt = this.ports.runtime.clock.now();
    this.log?.start();
    const { clock } = this.ports.runtime;
    const { events } = this.ports.delivery;
    events.emit({
      type: "turn-start",
      sessionKey: this.key,
      turnId: this.turnId,
      journalId: this.item.jid,
      ...this.chat,
      ...(this.item.restored ? { replay: true } : {}),
      ts: clock.now(),
    });
    this.processing("thinking");
  }

  /** An event of the running turn (its deltas, tool calls and results). */
  observe(event: GatewayEvent): void {
    this.ports.delivery.events.emit(event);
    this.log?.event(event);
    if (event.type === "tool-call") this.processing("tool");
    if (event.type === "tool-result") this.processing("thinking");
    if (this.verbose && event.type === "tool-call")
      void tell(this.ports, this.item, `⚙ ${event.name} ${truncate(event.arguments, 200)}`);
  }

  /** Entries the turn appended to its transcript (its model calls and compactions, for the log). */
  appended(entries: readonly TranscriptEntry[]): void {
    this.log?.entries(entries);
  }

  /** A file a tool attached to the reply. */
  file(file: OutboundAttachment): void {
    this.ports.delivery.events.emit({
      type: "file",
      sessionKey: this.key,
      turnId: this.turnId,
      path: file.path,
      kind: file.kind,
    });
  }

  usage(result: TurnResult): void {
    if (!result.usage) return;
    this.ports.delivery.events.emit({
      type: "usage",
      sessionKey: this.key,
      turnId: this.turnId,
      promptTokens: result.usage.promptTokens,
      completionTokens: result.usage.completionTokens,
      contextTokens: result.contextTokens,
      estimated: result.contextEstimated,
    });
  }

  /** The turn is over, however it ended (no result: it threw): logged with its figures, then its `turn-end`. */
  end(result: TurnResult | undefined): void {
    this.ports.runtime.logger.info("turn", {
      session: this.key,
      channel: this.chat.channel,
      durationMs: this.ports.runtime.clock.now() - this.startedAt,
      promptTokens: result?.usage?.promptTokens,
      completionTokens: result?.usage?.completionTokens,
      contextTokens: result?.contextTokens,
      stopReason: result?.stopReason ?? "error",
      rounds: result?.rounds,
    });
    this.log?.end(result);
    this.ports.delivery.events.emit({
      type: "turn-end",
      sessionKey: this.key,
      turnId: this.turnId,
      stopReason: result?.stopReason ?? "error",
      ...(result?.parked ? { parked: true } : {}),
      ...this.chat,
      ts: this.ports.runtime.clock.now(),
    });
    this.processing("idle");
  }

  private processing(state: "thinking" | "tool" | "idle"): void {
    this.ports.delivery.events.emit({
      type: "processing",
      sessionKey: this.key,
      state,
      ...this.chat,
      ts: this.ports.runtime.clock.now(),
    });
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
