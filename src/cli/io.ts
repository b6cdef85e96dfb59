import { flushLogLines } from "../core/logger.js";
import type { Env } from "../core/paths.js";

/** What a CLI command may touch: data goes to stdout, everything else to stderr. Tests pass their own. */
export interface CliIO {
  env: Env;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** stdout is a terminal: print tables and colours instead of plain lines. */
  isTTY: boolean;
}

/**
 * The process's own streams. A reader of stdout that goes away before the end (`clawdis sessions | head`) is not
 * a failure of the command: the rest of its output is dropped quietly and its exit code stays what it was. Any
 * other write error on stdout is thrown as before.
 */
export function processIO(): CliIO {
  let readerGone = false;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    readerGone = true;
  });
  return {
    env: process.env,
    stdout: (text) => {
      if (!readerGone) process.stdout.write(text);
    },
    stderr: (text) => {
      // Log lines given before this text come before it.
      flushLogLines();
      process.stderr.write(text);
    },
    isTTY: Boolean(process.stdout.isTTY),
  };
}

/** Exit codes everywhere: 0 done, 1 failed, 2 bad usage or bad config. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** A CliIO that records what a command printed (tests, and callers that want the output as text). */
export function recordingIO(env: Env, isTTY = false): CliIO & { out: string; err: string } {
  const io = {
    env,
    isTTY,
    out: "",
    err: "",
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
  };
  return io;
}
