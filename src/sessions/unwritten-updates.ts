import type { Clock } from "../core/clock.js";
import { type Changes, noChanges, recordUpdate, type UpdateFn } from "./store-changes.js";
import type { StoreImage } from "./store-image.js";
import type { SessionEntry } from "./types.js";

/** One `SessionStore.update` call, until its batch has landed. */
export interface PendingUpdate {
  key: string;
  fn: UpdateFn;
  resolve: (entry: SessionEntry | undefined) => void;
  reject: (error: unknown) => void;
}

/** What `getWithUpdates` applied of a key's unwritten updates, on which entry of the file (kept while both stay). */
interface UpdatesView {
  base: unknown;
  applied: number;
  changes: Changes;
}

/**
 * The session store's updates made in this process that its image does not hold yet (store.ts), and the entry
 * they make of a key: what `SessionStore.getWithUpdates` gives out.
 *
 * Contract: each key's updates are kept in the order they were made; an update leaves when its batch has landed
 * (`landed`: the batch's file is renamed in place at the same moment as the image that holds it is installed, or
 * the batch failed or changed nothing), so the image and this list never both hold one update.
 */
export class UnwrittenUpdates {
  private readonly unwritten = new Map<string, PendingUpdate[]>();
  /** The last `apply` of each key with updates unwritten: on which entry, how many of them it applied. */
  private readonly views = new Map<string, UpdatesView>();

  add(pending: PendingUpdate): void {
    const mine = this.unwritten.get(pending.key);
    if (mine) mine.push(pending);
    else this.unwritten.set(pending.key, [pending]);
  }

  /**
   * The entry of `key` in `image` with this process's unwritten updates of it applied in order (an update whose
   * function throws is left out, as its write leaves it out). Synchronous: call it in the step that found `image`.
   */
  apply(image: StoreImage | undefined, key: string, clock: Clock, path: string): SessionEntry | undefined {
    const mine = this.unwritten.get(key);
    if (mine === undefined) return image?.map[key];
    // The updates apply to the file's entry of the key alone: while that is the same object, so is their result.
    const base = image?.entry(key);
    let view = this.views.get(key);
    if (view === undefined || view.base !== base || view.applied > mine.length) {
      view = { base, applied: 0, changes: noChanges() };
      this.views.set(key, view);
    }
    const now = clock.now();
    for (; view.applied < mine.length; view.applied++) {
      try {
        recordUpdate(image, view.changes, key, (mine[view.applied] as PendingUpdate).fn, now, path);
      } catch {
        // Left out, as the write leaves it out (and fails that update alone).
      }
    }
    const { entries } = view.changes;
    return entries.has(key) ? entries.get(key) : image?.map[key];
  }

  /** `batch` is in the image (or failed, or changed nothing): its updates leave, and their keys' views go. */
  landed(batch: readonly PendingUpdate[]): void {
    for (const u of batch) {
      const mine = this.unwritten.get(u.key);
      if (mine === undefined) continue;
      this.views.delete(u.key);
      const at = mine.indexOf(u);
      if (at >= 0) mine.splice(at, 1);
      if (mine.length === 0) this.unwritten.delete(u.key);
    }
  }
}
