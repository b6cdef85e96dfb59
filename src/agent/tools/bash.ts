import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import type { ToolDefinition, ToolResult } from "../../plugin-api/types.js";
import { requireString, ToolArgError } from "./tool-args.js";
import { DEFAULT_OUTPUT_LIMIT_BYTES, HeadTailBuffer } from "./truncate-output.js";

/**
 * `bash`: runs `bash -c <command>` in the session's working directory (created when missing).
 *
 * Contract:
 * - the command runs in its own process group; on timeout (`context.timeoutMs`) or abort (`context.signal`)
 *   the whole group is killed with SIGKILL, and the call returns once the group's output pipes are closed
 *   (so whatever the command started in the group is gone, not just bash);
 * - stdout and stderr are combined in arrival order, capped at `outputLimitBytes` (head and tail kept);
 * - each chunk of output is progress: it calls `context.progress()` (the gateway's tool watchdog starts over)
 *   and starts `timeoutMs` over, so the limit bounds silence, not a command that keeps printing;
 * - the output always ends with a status line: `[exit code: N]`, `[killed by signal X]`, `[timed out after Ns …]`
 *   or `[aborted …]`; `ok` is true only for exit code 0;
 * - stdin is empty; a background job that outlives bash keeps running, and the call returns without waiting
 *   for it (after `pipeGraceMs`);
 * - `background: true` is the gateway's (src/jobs/gateway-jobs.ts wraps this tool to start a background job); this
 *   tool alone refuses it.
 */

export interface BashToolOptions {
  outputLimitBytes?: number;
  /** After bash exits, how long to wait for background jobs still holding the output pipes. */
  pipeGraceMs?: number;
  /** After a kill, how long to wait for the pipes before giving up on them (a process that left the group). */
  killGraceMs?: number;
}

export function bashTool(options: BashToolOptions = {}): ToolDefinition {
  return {
    name: "bash",
    description:
      "Run a shell command with bash in the working directory and get its combined stdout and stderr and exit code. " +
      "Long output is shortened in the middle. Commands that wait for input get none; the command is killed " +
      "when it runs past the time limit.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line, run as `bash -c <command>`." },
        background: {
          type: "boolean",
          description:
            "Run it as a background job: returns a job id at once; its exit code and last output arrive as a " +
            "new message when it ends (job_status, job_output, job_kill read and end it).",
        },
      },
      required: ["command"],
      additionalProperties: false,
    },
    async execute(args, context) {
      let command: string;
      try {
        command = requireString(args, "command");
      } catch (error) {
        if (error instanceof ToolArgError) return { ok: false, output: `bash: ${error.message}` };
        throw error;
      }
      if (args.background === true) {
        return {
          ok: false,
          output: "bash: background jobs are not available here; run the command without it",
        };
      }
      if (context.signal.aborted) return { ok: false, output: "[aborted before the command started]" };
      try {
        await mkdir(context.cwd, { recursive: true });
      } catch (error) {
        return { ok: false, output: `bash: cannot use working directory ${context.cwd}: ${String(error)}` };
      }
      return runBash(command, context.cwd, context.signal, context.timeoutMs, options, context.progress);
    },
  };
}

function runBash(
  command: string,
  cwd: string,
  signal: AbortSignal,
  timeoutMs: number,
  options: BashToolOptions,
  progress: (() => void) | undefined,
): Promise<ToolResult> {
  const output = new HeadTailBuffer(options.outputLimitBytes ?? DEFAULT_OUTPUT_LIMIT_BYTES);
  const pipeGraceMs = options.pipeGraceMs ?? 250;
  const killGraceMs = options.killGraceMs ?? 2000;

  return new Promise((resolve) => {
    const child = spawn("bash", ["-c", command], {
      cwd,
      detached: true, // its own process group, so the whole group can be killed
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PAGER: "cat", GIT_PAGER: "cat" },
    });
    let stopped: "timeout" | "aborted" | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const killGroup = (why: "timeout" | "aborted") => {
      if (stopped || exit) return;
      stopped = why;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // The group is already gone.
      }
      armGrace(killGraceMs);
    };
    const onAbort = () => killGroup("aborted");
    const limited = Number.isFinite(timeoutMs) && timeoutMs > 0;
    const timer = limited ? setTimeout(() => killGroup("timeout"), timeoutMs) : undefined;
    /** A chunk arrived: the silence limit starts over, and the gateway hears of it. */
    const onOutput = (chunk: Buffer) => {
      output.push(chunk);
      if (stopped || settled) return;
      if (timer) timer.refresh();
      progress?.();
    };
    signal.addEventListener("abort", onAbort, { once: true });

    /** Stops waiting for the pipes after `ms`: whatever still holds them is not ours to wait for. */
    function armGrace(ms: number) {
      if (graceTimer) return;
      graceTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, ms);
    }

    function finish(spawnError?: Error) {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      signal.removeEventListener("abort", onAbort);
      if (spawnError) {
        resolve({ ok: false, output: `bash: could not start bash: ${spawnError.message}` });
        return;
      }
      const text = output.toString();
      const body = text.length > 0 ? (text.endsWith("\n") ? text : `${text}\n`) : "(no output)\n";
      resolve({ ok: !stopped && exit?.code === 0, output: `${body}${statusLine(stopped, exit, timeoutMs)}` });
    }

    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    child.on("error", (error) => finish(error));
    child.on("exit", (code, exitSignal) => {
      exit = { code, signal: exitSignal };
      // Background jobs may hold the pipes open; wait a little for their output, not for them.
      armGrace(stopped ? killGraceMs : pipeGraceMs);
    });
    // All pipes closed: every process that held them (in the group: all of them) is gone.
    child.on("close", () => finish());
  });
}

function statusLine(
  stopped: "timeout" | "aborted" | undefined,
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  timeoutMs: number,
): string {
  if (stopped === "timeout") {
    return `[timed out after ${formatSeconds(timeoutMs)}: the command and everything it started were killed]`;
  }
  if (stopped === "aborted") return "[aborted: the command and everything it started were killed]";
  if (exit?.code !== null && exit?.code !== undefined) return `[exit code: ${exit.code}]`;
  return `[killed by signal ${exit?.signal ?? "unknown"}]`;
}

export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : Number(seconds.toFixed(1))}s`;
}
