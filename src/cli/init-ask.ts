import { createInterface } from "node:readline";
import { Writable } from "node:stream";
import { ClawdisError } from "../core/errors.js";

/**
 * One question on the terminal: `question [fallback]: `; an empty answer is the fallback. With `secret` what is
 * typed is not echoed (an API key). Tests pass their own.
 */
export type Ask = (question: string, fallback: string, options?: { secret?: boolean }) => Promise<string>;

/**
 * An Ask on a pair of streams (the process's stdin and stderr, or a test's), for several questions in a row: one
 * line per answer, lines typed ahead are kept for the next question, and the end of input is a USAGE error
 * (exit 2: the question was not answered). On a TTY the line is edited by readline; a secret
 * answer is read while readline's echo is dropped. `close()` when done.
 */
export function openAsk(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): { ask: Ask; close(): void } {
  let muted = false;
  const echo = new Writable({
    write(chunk, _encoding, callback) {
      if (!muted) output.write(chunk);
      callback();
    },
  });
  const terminal = Boolean((input as NodeJS.ReadStream).isTTY);
  const rl = createInterface({ input, output: echo, terminal });
  const lines = rl[Symbol.asyncIterator]();
  const ask: Ask = async (question, fallback, options = {}) => {
    output.write(`${question}${fallback ? ` [${fallback}]` : ""}: `);
    muted = options.secret === true;
    let next: IteratorResult<string>;
    try {
      next = await lines.next();
    } finally {
      if (muted) output.write("\n");
      muted = false;
    }
    if (next.done) {
      output.write("\n");
      throw new ClawdisError(
        "USAGE",
        `the input ended before "${question}" was answered; nothing was written`,
      );
    }
    const trimmed = next.value.trim();
    return trimmed.length > 0 ? trimmed : fallback;
  };
  return { ask, close: () => rl.close() };
}
