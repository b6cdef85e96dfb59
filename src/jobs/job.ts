/**
 * A background job's record and its lifecycle (docs/tools.md, Background jobs). Pure: `nextJob` decides every
 * change of state; GatewayJobs carries it out and writes the result to `jobs/jobs.json`.
 *
 * States: `running` until it ends; then exactly one of `exited` (it ended by itself: `exitCode` or `signal`),
 * `killed` (ended by `job_kill`, `/new` or passivation: `endedBy`), or `reaped` (its gateway stopped and killed it,
 * or is gone: found `running` in the file by a later gateway). An ended job never changes again: the exit
 * that follows a kill keeps it `killed`.
 */

export type JobState = "running" | "exited" | "killed" | "reaped";

/** Who ended a killed job. */
export type KilledBy = "job_kill" | "new" | "passivated";

export interface JobRecord {
  /** `j1`, `j2`, … within its session folder. */
  id: string;
  command: string;
  /** The working directory it ran in. */
  cwd: string;
  startedAt: number;
  state: JobState;
  /** Its process group (the leader's pid) while it runs. */
  pid?: number;
  endedAt?: number;
  exitCode?: number;
  signal?: string;
  endedBy?: KilledBy;
}

export type JobEvent =
  | { kind: "exit"; at: number; code: number | null; signal: string | null }
  | { kind: "kill"; at: number; by: KilledBy }
  | { kind: "reap"; at: number };

/** The record after `event`; the same record when the job has ended already. Pure. */
export function nextJob(job: JobRecord, event: JobEvent): JobRecord {
  if (job.state !== "running") return job;
  const { pid: _pid, ...rest } = job;
  switch (event.kind) {
    case "exit":
      return {
        ...rest,
        state: "exited",
        endedAt: event.at,
        ...(event.code !== null ? { exitCode: event.code } : {}),
        ...(event.code === null && event.signal !== null ? { signal: event.signal } : {}),
      };
    case "kill":
      return { ...rest, state: "killed", endedAt: event.at, endedBy: event.by };
    case "reap":
      return { ...rest, state: "reaped", endedAt: event.at };
  }
}

/**
 * The records as this gateway sees them: a `running` one that is not among `live` (its gateway is gone) is
 * `reaped`. Pure.
 */
export function withReaped(
  records: readonly JobRecord[],
  live: ReadonlySet<string>,
  at: number,
): JobRecord[] {
  return records.map((job) =>
    job.state === "running" && !live.has(job.id) ? nextJob(job, { kind: "reap", at }) : job,
  );
}

/** The next id in a folder that holds `records`: one past the highest `j<n>`. Pure. */
export function nextJobId(records: readonly JobRecord[]): string {
  let highest = 0;
  for (const job of records) {
    const n = /^j(\d+)$/.exec(job.id)?.[1];
    if (n !== undefined) highest = Math.max(highest, Number(n));
  }
  return `j${highest + 1}`;
}

/** How many jobs may run at once: in one session, and in the whole gateway. */
export interface JobLimits {
  perSession: number;
  total: number;
}

export const DEFAULT_JOB_LIMITS: JobLimits = { perSession: 4, total: 16 };

/** Why a new job may not start (the tool error), or undefined when it may. Pure. */
export function refuseStart(
  running: { session: number; total: number },
  limits: JobLimits,
): string | undefined {
  if (running.session >= limits.perSession) {
    return `this session already runs ${running.session} background jobs, the most one session may run at once (${limits.perSession}); wait for one to end or stop one with job_kill`;
  }
  if (running.total >= limits.total) {
    return `the gateway already runs ${running.total} background jobs, the most it runs at once (${limits.total}); wait for one to end or stop one with job_kill`;
  }
  return undefined;
}

/** A job's state in words: `running`, `exited with code 0`, `killed by job_kill`, `reaped (…)`. Pure. */
export function describeState(job: JobRecord): string {
  switch (job.state) {
    case "running":
      return "running";
    case "exited":
      return job.exitCode !== undefined
        ? `exited with code ${job.exitCode}`
        : `ended by signal ${job.signal ?? "unknown"}`;
    case "killed":
      return `killed (${killedWhy(job.endedBy)})`;
    case "reaped":
      return "reaped (the gateway that ran it stopped; its log is kept)";
  }
}

function killedWhy(by: KilledBy | undefined): string {
  switch (by) {
    case "job_kill":
      return "job_kill";
    case "new":
      return "the session was started anew";
    case "passivated":
      return "the session was unloaded";
    default:
      return "unknown";
  }
}
