/** Telegram shows "typing…" for 5 s after a sendChatAction; renewing every 4 s keeps it on without a gap. */
export const TYPING_RENEW_MS = 4000;

export interface Timers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const nodeTimers: Timers = {
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

/**
 * The typing indicator of each running turn: on at `start` (turn-start), renewed every TYPING_RENEW_MS, off at
 * `stop` (turn-end, however the turn ended) or `stopAll` (the transport stops). A failed chat action is only
 * logged through `onError`: the indicator never holds up a turn.
 */
export class TypingIndicator {
  private readonly running = new Map<string, unknown>();

  constructor(
    private readonly sendTyping: (chatId: string) => Promise<unknown>,
    private readonly onError: (chatId: string, error: unknown) => void,
    private readonly timers: Timers = nodeTimers,
  ) {}

  start(turnId: string, chatId: string): void {
    this.stop(turnId);
    const tick = () => {
      this.sendTyping(chatId).catch((error: unknown) => this.onError(chatId, error));
    };
    tick();
    this.running.set(turnId, this.timers.setInterval(tick, TYPING_RENEW_MS));
  }

  stop(turnId: string): void {
    const handle = this.running.get(turnId);
    if (handle === undefined) return;
    this.timers.clearInterval(handle);
    this.running.delete(turnId);
  }

  stopAll(): void {
    for (const turnId of [...this.running.keys()]) this.stop(turnId);
  }

  get active(): number {
    return this.running.size;
  }
}
