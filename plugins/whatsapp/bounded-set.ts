/** A set of ids that forgets its oldest members past `limit` (what a WhatsApp connection remembers). */
export class BoundedSet {
  private readonly items = new Set<string>();
  constructor(private readonly limit: number) {}
  has(item: string): boolean {
    return this.items.has(item);
  }
  add(item: string): void {
    this.items.delete(item);
    this.items.add(item);
    for (const oldest of this.items) {
      if (this.items.size <= this.limit) break;
      this.items.delete(oldest);
    }
  }
}
