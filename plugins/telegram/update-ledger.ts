/**
 * Which polled updates are being handled, and so which offset may be confirmed. Pure state, no I/O.
 *
 * Updates are handled concurrently (one lane per chat), but the offset keeps its rule: the offset confirmed to
 * Telegram and saved is past an update only once `receive` resolved for it and for every update below it. While
 * an update is open (its files downloading, its receive running) or failed (its receive threw), the offset stays
 * at it, so Telegram keeps sending it and the ones after it; `take` tells the new ones from the ones already
 * taken, and a failed one is taken again (it is asked for again, as before).
 */
export class UpdateLedger {
  /** Taken, not yet settled. */
  private readonly open = new Set<number>();
  /** Settled by a throw: to take again. They hold the offset. */
  private readonly failed = new Set<number>();
  /** Settled (receive resolved) at or above the offset; forgotten once the offset passes them. */
  private readonly done = new Set<number>();
  private next: number | undefined;

  /** `offset`: the one saved (everything below it was handled in an earlier run). */
  constructor(offset: number | undefined) {
    this.next = offset;
  }

  /** Whether the update is new: not below the offset, not open, not done. A new one is now open. */
  take(id: number): boolean {
    const offset = this.offset();
    if (offset !== undefined && id < offset) return false;
    if (this.open.has(id) || this.done.has(id)) return false;
    this.failed.delete(id);
    this.open.add(id);
    if (this.next === undefined || id >= this.next) this.next = id + 1;
    return true;
  }

  /** The update's handling ended: `ok` when receive resolved, false when it threw (it is taken again). */
  settle(id: number, ok: boolean): void {
    if (!this.open.delete(id)) return;
    if (ok) this.done.add(id);
    else this.failed.add(id);
    const offset = this.offset();
    if (offset === undefined) return;
    for (const seen of this.done) if (seen < offset) this.done.delete(seen);
  }

  /** The offset to confirm: every update below it has been received. Undefined before any update. */
  offset(): number | undefined {
    let lowest = this.next;
    for (const id of this.open) if (lowest === undefined || id < lowest) lowest = id;
    for (const id of this.failed) if (lowest === undefined || id < lowest) lowest = id;
    return lowest;
  }

  /** How many updates are open (downloading or being received). */
  get openCount(): number {
    return this.open.size;
  }

  /** Whether an update failed and waits to be asked for again. */
  get hasFailed(): boolean {
    return this.failed.size > 0;
  }
}
