import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { ChatType, ReceiveResult, ToolDefinition, ToolResult } from "../plugin-api/types.js";
import type { InternalInput, InternalRoute } from "../runtime/internal-input.js";
import type { TurnToolsInput } from "../runtime/tools-policy.js";
import {
  DEFAULT_JOB_LIMITS,
  type JobEvent,
  type JobLimits,
  type JobRecord,
  type KilledBy,
  nextJob,
  nextJobId,
  refuseStart,
  withReaped,
} from "./job.js";
import { JOB_LOG_LIMIT_BYTES, JobLog, readLogRange, readLogTail } from "./job-log.js";
import { type JobProcess, startJobProcess } from "./job-process.js";
import { jobLine, jobTools } from "./job-tools.js";
import { jobLogPath, readJobs, writeJobs } from "./jobs-file.js";

export interface GatewayJobsDeps {
  clock: Clock;
  logger: Pick<Logger, "info" | "warn">;
  /** The folder of session `key`'s conversation now (`<store dir>/<sessionId>`); undefined: it has none yet. */
  folderOf(key: string): Promise<string | undefined>;
  /** The tool names the turn on `message` in session `key` has: a job's result turn gets the same. */
  toolNamesFor(key: string, message: JobMessage): string[];
  /** `Gateway.submitInternal`. */
  submit(input: InternalInput): Promise<ReceiveResult>;
  limits?: JobLimits;
  logLimitBytes?: number;
}

/**
 * What of a turn's message a job keeps: where its result is answered (its chat; absent: the session's last chat),
 * and whose tools that turn gets.
 */
export type JobMessage = TurnToolsInput["message"] & { chatId?: string; chatType?: ChatType };

/** How much of a job's output its result carries. */
export const RESULT_TAIL_BYTES = 2000;

interface LiveJob {
  key: string;
  folder: string;
  record: JobRecord;
  process: JobProcess;
  log: JobLog;
  route: InternalRoute | undefined;
  tools: string[];
}

/**
 * The gateway's background jobs (docs/tools.md, Background jobs): `bash` with `background: true` starts one in the
 * turn's session; `job_status`, `job_output`, `job_kill` read and end them; a job that ends by itself hands its
 * session a `job-result` input (automated, in the chat it was started from, with the tools of the turn that
 * started it). Each session folder's `jobs/jobs.json` records them (written on every change, one write at a time
 * per folder). A session with a live job counts as busy (never unloaded); `/new`, an unload and the gateway's
 * stop kill what runs (the whole process group); the stop records them `reaped`.
 */
export class GatewayJobs {
  private readonly live = new Map<string, LiveJob>();
  private readonly writes = new Map<string, Promise<unknown>>();
  private halted = false;

  constructor(private readonly deps: GatewayJobsDeps) {}

  private get limits(): JobLimits {
    return this.deps.limits ?? DEFAULT_JOB_LIMITS;
  }

  /**
   * `tools` for a turn on `message` in session `key`, its `bash` taking `background: true` (the other calls go to
   * the `bash` given), and the three job tools after them (none without a `bash`).
   */
  withJobTools(key: string, message: JobMessage, tools: readonly ToolDefinition[]): ToolDefinition[] {
    const wrapped = tools.map((tool) =>
      tool.name !== "bash"
        ? tool
        : {
            ...tool,
            execute: (args: Record<string, unknown>, context: Parameters<ToolDefinition["execute"]>[1]) =>
              args.background === true && typeof args.command === "string"
                ? this.start(key, message, args.command, context.cwd)
                : tool.execute(args, context),
          },
    );
    const port = {
      list: () => this.list(key),
      output: (id: string, offset: number | undefined, length: number) =>
        this.output(key, id, offset, length),
      kill: (id: string) => this.killOne(key, id),
      now: () => this.deps.clock.now(),
    };
    return tools.some((tool) => tool.name === "bash") ? [...wrapped, ...jobTools(port)] : wrapped;
  }

  /** Whether session `key` has a job running (it is then not unloaded). */
  hasLive(key: string): boolean {
    for (const job of this.live.values()) if (job.key === key) return true;
    return false;
  }

  /** Session `key`'s running jobs with their age, oldest first (`/status`). */
  running(key: string): { id: string; command: string; ageMs: number }[] {
    const now = this.deps.clock.now();
    return [...this.live.values()]
      .filter((job) => job.key === key)
      .map((job) => ({ id: job.record.id, command: job.record.command, ageMs: now - job.record.startedAt }));
  }

  /**
   * Session `key`'s jobs in its folder now (a `running` one not live here is `reaped`), then those still running
   * from an earlier conversation of the key (an idle expiry started a new one; `/new` kills them).
   */
  async list(key: string): Promise<JobRecord[]> {
    const folder = await this.deps.folderOf(key);
    if (!folder) return [];
    await this.writes.get(folder);
    const mine = [...this.live.values()].filter((j) => j.key === key);
    const live = new Set(mine.filter((j) => j.folder === folder).map((j) => j.record.id));
    const earlier = mine.filter((j) => j.folder !== folder).map((j) => j.record);
    return [...withReaped(await readJobs(folder), live, this.deps.clock.now()), ...earlier];
  }

  /** Kills what session `key` runs (`/new`, an unload); no result is handed in for them. */
  async killSession(key: string, by: KilledBy): Promise<void> {
    const jobs = [...this.live.values()].filter((job) => job.key === key);
    await Promise.all(jobs.map((job) => this.end(job, { kind: "kill", at: this.deps.clock.now(), by })));
  }

  /** No job starts any more (the gateway is stopping); what runs runs on until `stop`. */
  halt(): void {
    this.halted = true;
  }

  /** Kills every job (the whole process group of each) and records them `reaped`. */
  async stop(): Promise<void> {
    this.halted = true;
    const at = this.deps.clock.now();
    await Promise.all([...this.live.values()].map((job) => this.end(job, { kind: "reap", at })));
    await Promise.all(this.writes.values());
  }

  private async start(key: string, message: JobMessage, command: string, cwd: string): Promise<ToolResult> {
    if (this.halted)
      return { ok: false, output: "bash: the gateway is stopping: no background job starts now" };
    const refused = refuseStart(
      { session: [...this.live.values()].filter((job) => job.key === key).length, total: this.live.size },
      this.limits,
    );
    if (refused) return { ok: false, output: `bash: ${refused}` };
    const folder = await this.deps.folderOf(key);
    if (!folder) return { ok: false, output: "bash: this session has no folder yet for a background job" };
    const tools = this.deps.toolNamesFor(key, message);
    const route: InternalRoute | undefined =
      message.chatId !== undefined && message.chatType !== undefined
        ? { channel: message.channel, chatId: message.chatId, chatType: message.chatType }
        : undefined;
    const started = await this.update(folder, (records) => {
      const id = nextJobId(records);
      const log = new JobLog(jobLogPath(folder, id), this.deps.logLimitBytes ?? JOB_LOG_LIMIT_BYTES);
      const record: JobRecord = { id, command, cwd, startedAt: this.deps.clock.now(), state: "running" };
      const job: LiveJob = {
        key,
        folder,
        record,
        log,
        route,
        tools,
        process: startJobProcess(command, cwd, log, (end) => void this.onEnd(job, end)),
      };
      if (job.process.pid !== undefined) job.record = { ...record, pid: job.process.pid };
      this.live.set(liveKey(folder, id), job);
      return { records: [...records, job.record], value: job };
    });
    this.deps.logger.info("background job started", { sessionKey: key, job: started.record.id });
    return {
      ok: true,
      output:
        `started background job ${started.record.id} (output: jobs/${started.record.id}.log). When it ends, its exit ` +
        "code and last output arrive as a new message; job_status, job_output and job_kill read and end it.",
    };
  }

  private async onEnd(
    job: LiveJob,
    end: { code: number | null; signal: string | null; error?: string },
  ): Promise<void> {
    if (end.error) job.log.write(`[clawdis: ${end.error}]\n`);
    await job.log.settled();
    const ended = await this.end(job, { kind: "exit", at: this.deps.clock.now(), ...end });
    // Killed by us: nobody waits for a result.
    if (!ended) return;
    const tail = await readLogTail(job.log.path, RESULT_TAIL_BYTES);
    const text = `Background job ${jobLine(ended, this.deps.clock.now())}\nlast output (jobs/${ended.id}.log):\n${tail.length > 0 ? tail : "(no output)"}`;
    try {
      await this.deps.submit({
        sessionKey: job.key,
        kind: "job-result",
        text,
        authority: "automated",
        allowedTools: job.tools,
        ...(job.route ? { route: job.route } : {}),
        id: `job:${basename(job.folder)}:${ended.id}:${ended.startedAt}`,
      });
    } catch (error) {
      this.deps.logger.warn("a background job's result could not be handed to its session", {
        sessionKey: job.key,
        job: ended.id,
        error: String(error),
      });
    }
  }

  /** Applies `event` to a live job (a kill kills its group first); its record after, or undefined if it had ended. */
  private async end(job: LiveJob, event: JobEvent): Promise<JobRecord | undefined> {
    const id = liveKey(job.folder, job.record.id);
    if (this.live.get(id) !== job) return undefined;
    this.live.delete(id);
    if (event.kind !== "exit") job.process.kill();
    job.record = nextJob(job.record, event);
    // What it wrote before the kill is in its log once this resolves.
    await job.log.settled();
    const record = job.record;
    await this.update(job.folder, (records) => ({
      records: records.map((r) => (r.id === record.id ? record : r)),
      value: undefined,
    }));
    return record;
  }

  private async killOne(key: string, id: string): Promise<JobRecord | undefined> {
    const job = [...this.live.values()].find((j) => j.key === key && j.record.id === id);
    if (!job) return (await this.list(key)).find((r) => r.id === id);
    return this.end(job, { kind: "kill", at: this.deps.clock.now(), by: "job_kill" });
  }

  private async output(
    key: string,
    id: string,
    offset: number | undefined,
    length: number,
  ): Promise<{ text: string; size: number } | undefined> {
    const current = await this.deps.folderOf(key);
    const earlier = [...this.live.values()].find(
      (j) => j.key === key && j.record.id === id && j.folder !== current,
    );
    const folder = current && (await readJobs(current)).some((r) => r.id === id) ? current : earlier?.folder;
    if (!folder) return undefined;
    const path = jobLogPath(folder, id);
    await this.live.get(liveKey(folder, id))?.log.settled();
    const size = await stat(path).then(
      (s) => s.size,
      () => 0,
    );
    return { text: await readLogRange(path, offset, length), size };
  }

  /** Reads the folder's records, changes them, writes them: one at a time per folder. */
  private update<T>(
    folder: string,
    change: (records: JobRecord[]) => { records: JobRecord[]; value: T },
  ): Promise<T> {
    const run = (this.writes.get(folder) ?? Promise.resolve()).then(async () => {
      const { records, value } = change(await readJobs(folder));
      await writeJobs(folder, records);
      return value;
    });
    const settled = run.catch((error: unknown) =>
      this.deps.logger.warn("jobs.json could not be written", { folder, error: String(error) }),
    );
    this.writes.set(folder, settled);
    void settled.then(() => {
      if (this.writes.get(folder) === settled) this.writes.delete(folder);
    });
    return run;
  }
}

function liveKey(folder: string, id: string): string {
  return `${folder}\u0000${id}`;
}
