import { spawn } from "node:child_process";
import type { JobLog } from "./job-log.js";

/**
 * A background job's process: `bash -c <command>` in its own process group (detached), stdin empty, stdout and
 * stderr into its log in arrival order (paused while more than MAX_BACKLOG_BYTES wait to be written). `onEnd` is called once, when bash has exited and its output pipes are
 * closed (or `pipeGraceMs` after the exit, when something it left behind still holds them), after the log has
 * written what came. `kill` ends the whole group with SIGKILL.
 */
export interface JobProcess {
  pid: number | undefined;
  kill(): void;
}

/** How much output may wait for the log before the job's pipes are paused. */
const MAX_BACKLOG_BYTES = 1024 * 1024;

export function startJobProcess(
  command: string,
  cwd: string,
  log: JobLog,
  onEnd: (end: { code: number | null; signal: string | null; error?: string }) => void,
  pipeGraceMs = 250,
): JobProcess {
  const child = spawn("bash", ["-c", command], {
    cwd,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PAGER: "cat", GIT_PAGER: "cat" },
  });
  let exit: { code: number | null; signal: string | null } | undefined;
  let ended = false;
  let grace: NodeJS.Timeout | undefined;
  const end = (error?: string) => {
    if (ended) return;
    ended = true;
    if (grace) clearTimeout(grace);
    const result = { code: exit?.code ?? null, signal: exit?.signal ?? null, ...(error ? { error } : {}) };
    void log.settled().then(() => onEnd(result));
  };
  // A job that prints faster than its log is written waits (its pipes are paused), rather than its output
  // piling up in memory.
  let paused = false;
  const onData = (chunk: Buffer) => {
    log.write(chunk);
    if (paused || log.backlog() <= MAX_BACKLOG_BYTES) return;
    paused = true;
    child.stdout.pause();
    child.stderr.pause();
    void log.settled().then(() => {
      paused = false;
      child.stdout.resume();
      child.stderr.resume();
    });
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  child.on("error", (error) => end(`could not start bash: ${error.message}`));
  child.on("exit", (code, signal) => {
    exit = { code, signal };
    grace = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      end();
    }, pipeGraceMs);
  });
  child.on("close", () => end());
  return {
    pid: child.pid,
    kill() {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is gone already.
      }
    },
  };
}
