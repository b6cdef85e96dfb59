import type { Readable } from "node:stream";

/** What a waiter gets: the match, and where the text after it starts (to wait for the next thing from there). */
export interface LogMatch {
  match: RegExpExecArray;
  end: number;
}

/**
 * Everything a child process writes to one of its streams, kept as text. `waitFor` resolves on the first match
 * (already written or written later) and rejects when the stream ends without one, or at a deadline that exists
 * only to turn a hang into a readable failure (it is never how a test waits for something).
 */
export class OutputLog {
  private all = "";
  private ended = false;
  private readonly waiters = new Set<() => void>();

  constructor(
    stream: Readable,
    private readonly label: string,
  ) {
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      this.all += chunk;
      this.wake();
    });
    stream.on("close", () => {
      this.ended = true;
      this.wake();
    });
  }

  /** The whole text so far. */
  text(): string {
    return this.all;
  }

  /** Complete lines so far. */
  lines(): string[] {
    const parts = this.all.split("\n");
    parts.pop();
    return parts;
  }

  get length(): number {
    return this.all.length;
  }

  /** Waits for `pattern` in the text from character `from` on. */
  waitFor(pattern: RegExp | string, options: { from?: number; timeoutMs?: number } = {}): Promise<LogMatch> {
    const from = options.from ?? 0;
    const regex = typeof pattern === "string" ? new RegExp(escapeRegExp(pattern)) : pattern;
    const timeoutMs = options.timeoutMs ?? 15_000;
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = regex.exec(this.all.slice(from));
        if (match) {
          done();
          resolve({ match, end: from + match.index + match[0].length });
          return true;
        }
        if (this.ended) {
          done();
          reject(new Error(`${this.label} ended without ${regex}; it wrote:\n${this.tail()}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.label}: no ${regex} within ${timeoutMs} ms; it wrote:\n${this.tail()}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      const waiter = () => {
        check();
      };
      if (!check()) this.waiters.add(waiter);
    });
  }

  /** The last few thousand characters, for failure messages. */
  tail(chars = 4000): string {
    return this.all.length > chars ? `…${this.all.slice(-chars)}` : this.all;
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
