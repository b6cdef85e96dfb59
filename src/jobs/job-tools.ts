import type { ToolDefinition, ToolResult } from "../plugin-api/types.js";
import { describeState, type JobRecord } from "./job.js";

/**
 * `job_status`, `job_output` and `job_kill`: read and end the background jobs of the turn's session (docs/tools.md,
 * Background jobs). What they read and do is the port's (GatewayJobs); these only check arguments and word it.
 */
export interface JobsPort {
  /** The session's jobs, newest last (`running` ones not run by this gateway listed `reaped`). */
  list(): Promise<JobRecord[]>;
  /** `length` bytes of job `id`'s log from `offset` (undefined: its last `length`), and its size. */
  output(
    id: string,
    offset: number | undefined,
    length: number,
  ): Promise<{ text: string; size: number } | undefined>;
  /** Kills job `id` if it runs; its record after. */
  kill(id: string): Promise<JobRecord | undefined>;
  now(): number;
}

/** The most of a log one `job_output` call returns. */
export const JOB_OUTPUT_MAX_BYTES = 64 * 1024;
const JOB_OUTPUT_DEFAULT_BYTES = 4000;

export function jobTools(port: JobsPort): ToolDefinition[] {
  return [statusTool(port), outputTool(port), killTool(port)];
}

/** One line per job: `j1  running 2m  sleep 100`. Pure. */
export function jobLine(job: JobRecord, now: number): string {
  const end = job.endedAt ?? now;
  return `${job.id}  ${describeState(job)}, ran ${seconds(end - job.startedAt)}  ${oneLine(job.command)}`;
}

function statusTool(port: JobsPort): ToolDefinition {
  return {
    name: "job_status",
    description:
      "The background jobs of this session (started with bash background: true): each one's state (running, " +
      "exited with its code, killed, reaped), how long it ran, and its command. Give id for one job only.",
    parameters: {
      type: "object",
      properties: { id: { type: "string", description: "A job id such as j1; absent: every job." } },
      additionalProperties: false,
    },
    async execute(args) {
      const id = optionalString(args.id);
      const jobs = await port.list();
      const shown = id === undefined ? jobs : jobs.filter((job) => job.id === id);
      if (id !== undefined && shown.length === 0) return unknownJob("job_status", id);
      if (shown.length === 0) return { ok: true, output: "no background jobs in this session" };
      return { ok: true, output: shown.map((job) => jobLine(job, port.now())).join("\n") };
    },
  };
}

function outputTool(port: JobsPort): ToolDefinition {
  return {
    name: "job_output",
    description:
      "Read a background job's output log (jobs/<id>.log; past its limit the oldest output is dropped and its " +
      `first line says so). Default: its last ${JOB_OUTPUT_DEFAULT_BYTES} bytes; give offset for a range from that ` +
      `byte, length for how much (at most ${JOB_OUTPUT_MAX_BYTES}).`,
    parameters: {
      type: "object",
      properties: {
        id: { type: "string", description: "The job id, such as j1." },
        offset: { type: "integer", description: "The first byte to read; absent: read the end of the log." },
        length: { type: "integer", description: "How many bytes." },
      },
      required: ["id"],
      additionalProperties: false,
    },
    async execute(args) {
      const id = optionalString(args.id);
      if (id === undefined) return { ok: false, output: "job_output: give id, a job id such as j1" };
      const offset = optionalCount(args.offset);
      const length = optionalCount(args.length);
      if (offset === null || length === null) {
        return { ok: false, output: "job_output: offset and length are whole numbers of 0 or more" };
      }
      const read = await port.output(
        id,
        offset,
        Math.min(length ?? JOB_OUTPUT_DEFAULT_BYTES, JOB_OUTPUT_MAX_BYTES),
      );
      if (!read) return unknownJob("job_output", id);
      const bytes = Buffer.byteLength(read.text);
      const from = offset ?? Math.max(0, read.size - bytes);
      const head = `[${id}.log: ${read.size} bytes; bytes ${from} to ${from + bytes}]`;
      return { ok: true, output: `${head}\n${read.text}` };
    },
  };
}

function killTool(port: JobsPort): ToolDefinition {
  return {
    name: "job_kill",
    description: "End a running background job and everything it started (its whole process group).",
    parameters: {
      type: "object",
      properties: { id: { type: "string", description: "The job id, such as j1." } },
      required: ["id"],
      additionalProperties: false,
    },
    async execute(args) {
      const id = optionalString(args.id);
      if (id === undefined) return { ok: false, output: "job_kill: give id, a job id such as j1" };
      const before = (await port.list()).find((job) => job.id === id);
      if (!before) return unknownJob("job_kill", id);
      if (before.state !== "running") {
        return { ok: true, output: `${id} had ended already: ${jobLine(before, port.now())}` };
      }
      const after = await port.kill(id);
      return { ok: true, output: after ? jobLine(after, port.now()) : `${id} killed` };
    },
  };
}

function unknownJob(tool: string, id: string): ToolResult {
  return {
    ok: false,
    output: `${tool}: this session has no job ${JSON.stringify(id)} (job_status lists them)`,
  };
}

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** undefined: absent; null: not a whole number of 0 or more. */
function optionalCount(value: unknown): number | undefined | null {
  if (value === undefined) return undefined;
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;
}

function oneLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, " ");
  return line.length > 120 ? `${line.slice(0, 117)}...` : line;
}

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ""}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}
