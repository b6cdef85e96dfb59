import type { Clock } from "../core/clock.js";

/**
 * The gateway's stop as a named, ordered list of stages (docs/runtime.md, Stopping and restarting). `runShutdown`
 * runs every stage in order, awaiting each; a stage that throws is reported to `onFailure` with its name and the
 * stages after it still run. A new owner of state adds a stage where its order requires.
 */

export interface ShutdownStage {
  name: string;
  run: () => void | Promise<void>;
}

/** Runs `stages` in order; returns the names of those that failed, in order. Never throws. */
export async function runShutdown(
  stages: readonly ShutdownStage[],
  onFailure: (stage: string, error: unknown) => void,
): Promise<string[]> {
  const failed: string[] = [];
  for (const stage of stages) {
    try {
      await stage.run();
    } catch (error) {
      failed.push(stage.name);
      onFailure(stage.name, error);
    }
  }
  return failed;
}

/**
 * Waits for `drain` (every running turn at its safe point) at most `deadlineMs` on `clock`. When it is late,
 * calls `abort` (what still runs is aborted) and waits for `drain` again. Resolves "drained" or "aborted".
 */
export async function drainWithin(
  drain: () => Promise<void>,
  abort: () => void,
  deadlineMs: number,
  clock: Clock,
): Promise<"drained" | "aborted"> {
  let timer: unknown;
  const late = new Promise<"late">((resolve) => {
    timer = clock.setTimeout(() => resolve("late"), deadlineMs);
  });
  const first = await Promise.race([drain().then(() => "drained" as const), late]);
  clock.clearTimeout(timer);
  if (first === "drained") return "drained";
  abort();
  await drain();
  return "aborted";
}
