import { Worker } from "node:worker_threads";

/** Now on the clock every thread of this process shares (ms): `performance.timeOrigin + performance.now()`. */
export function absoluteNow(): number {
  return performance.timeOrigin + performance.now();
}

const WORKER = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", ({ pid, delayMs }) => {
  setTimeout(() => {
    const at = performance.timeOrigin + performance.now();
    try { process.kill(pid, "SIGKILL"); } catch {}
    parentPort.postMessage(at);
  }, delayMs);
});
`;

/**
 * SIGKILL sent from a worker thread, after a delay timed by the worker's own event loop: the moment of the kill
 * is independent of what the test's main thread is doing (its fakes answering requests). A kill timed on the main
 * thread fires in a timers phase, right after the I/O callbacks of its poll phase, so it lands just after a fake
 * answered a request far more often than chance would have it.
 */
export class OffThreadKiller {
  private readonly worker = new Worker(WORKER, { eval: true });

  /** Kills `pid` with SIGKILL `delayMs` from now; resolves with the moment it was sent (`absoluteNow`'s clock). */
  killAfter(pid: number, delayMs: number): Promise<number> {
    return new Promise((resolve) => {
      this.worker.once("message", (at: number) => resolve(at));
      this.worker.postMessage({ pid, delayMs });
    });
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}
