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
