/**
 * Bounded output for tools: what the model sees is at most `limit` bytes, keeping the head and the tail (where
 * errors and summaries usually are) with a marker that says how much was left out. Memory stays bounded too:
 * a command that prints gigabytes is collected in O(limit).
 */

export const DEFAULT_OUTPUT_LIMIT_BYTES = 32 * 1024;

export function omittedMarker(bytes: number): string {
  return `\n[… ${bytes} bytes omitted …]\n`;
}

export class HeadTailBuffer {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** Every byte pushed, kept or not. */
  totalBytes = 0;

  constructor(limit: number = DEFAULT_OUTPUT_LIMIT_BYTES) {
    this.headLimit = Math.ceil(limit / 2);
    this.tailLimit = Math.floor(limit / 2);
  }

  push(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(this.headLimit - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    // Drop whole chunks from the front while the rest still covers the tail limit.
    while (this.tail.length > 1 && this.tailBytes - this.tail[0]!.length >= this.tailLimit) {
      this.tailBytes -= this.tail.shift()!.length;
    }
  }

  get truncated(): boolean {
    return this.totalBytes > this.headLimit + this.tailLimit;
  }

  toString(): string {
    const head = Buffer.concat(this.head);
    const tailAll = Buffer.concat(this.tail);
    if (!this.truncated) return Buffer.concat([head, tailAll]).toString("utf8");
    const tail = tailAll.subarray(tailAll.length - this.tailLimit);
    const omitted = this.totalBytes - head.length - tail.length;
    // A cut may split a UTF-8 sequence; the replacement characters at the cut are dropped.
    const headText = head.toString("utf8").replace(/\uFFFD+$/, "");
    const tailText = tail.toString("utf8").replace(/^\uFFFD+/, "");
    return `${headText}${omittedMarker(omitted)}${tailText}`;
  }
}
