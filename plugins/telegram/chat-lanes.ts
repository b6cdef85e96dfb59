/**
 * One queue per chat: jobs of the same chat run one after another, in the order they were queued; jobs of
 * different chats run at the same time. So one chat's slow job (a file downloading) holds only that chat.
 *
 * A job that throws breaks its lane: the jobs queued behind it in that chat are not run (`skipped` is called for
 * each instead), so nothing of that chat overtakes the failed one; they are queued again when Telegram sends
 * them again. The lane works again once it has run empty.
 */
export class ChatLanes {
  private readonly lanes = new Map<string, { tail: Promise<void>; queued: number; broken: boolean }>();
  private readonly idleWaiters: (() => void)[] = [];
  private running = 0;

  /**
   * Queues `job` on `chat`'s lane. `onError` is told when it throws; `skipped` when it is not run because an
   * earlier job of its lane threw. Neither this nor the lane ever rejects.
   */
  add(
    chat: string,
    job: () => Promise<void>,
    handlers: { onError: (error: unknown) => void; skipped: () => void },
  ): void {
    const lane = this.lanes.get(chat) ?? { tail: Promise.resolve(), queued: 0, broken: false };
    this.lanes.set(chat, lane);
    lane.queued += 1;
    this.running += 1;
    lane.tail = lane.tail.then(async () => {
      try {
        if (lane.broken) handlers.skipped();
        else {
          try {
            await job();
          } catch (error) {
            lane.broken = true;
            handlers.onError(error);
          }
        }
      } finally {
        lane.queued -= 1;
        if (lane.queued === 0) this.lanes.delete(chat);
        this.running -= 1;
        if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      }
    });
  }

  /** Resolves once no job is queued or running. */
  idle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
