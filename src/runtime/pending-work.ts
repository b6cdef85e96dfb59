/**
 * What a warm session's final save waits for (the store update after a turn): the part of a `Set` the runner
 * uses — add, delete, size, iteration — over a plain array. One is held per warm session, nearly always empty:
 * an empty array costs a few words, an empty `Set` keeps a hash table (~300 bytes; 3 MB for 10,000 sessions).
 * Holds a few items at a time, so the linear lookups cost nothing.
 */
export class PendingWork<T = Promise<unknown>> implements Iterable<T> {
  private items: T[] = [];

  /** Adds `item` unless it is there already (as a Set does). */
  add(item: T): this {
    if (!this.items.includes(item)) this.items.push(item);
    return this;
  }

  /** Removes `item`; whether it was there. */
  delete(item: T): boolean {
    const at = this.items.indexOf(item);
    if (at === -1) return false;
    this.items.splice(at, 1);
    return true;
  }

  get size(): number {
    return this.items.length;
  }

  /** In the order added; a copy, so removing during the iteration is safe. */
  [Symbol.iterator](): Iterator<T> {
    return [...this.items][Symbol.iterator]();
  }
}
