import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writePrivateFile } from "../plugin-api/write-private-file.js";
import type { JobRecord, JobState } from "./job.js";

/**
 * A session folder's jobs: `<folder>/jobs/jobs.json` (`{"version": 1, "jobs": [...]}`, written atomically, 0600)
 * beside each job's `<id>.log` (docs/files.md). Read by the gateway (job tools, `/status`) and by
 * `clawdis sessions show`.
 */

export function jobsDir(folder: string): string {
  return join(folder, "jobs");
}

export function jobsFilePath(folder: string): string {
  return join(jobsDir(folder), "jobs.json");
}

export function jobLogPath(folder: string, id: string): string {
  return join(jobsDir(folder), `${id}.log`);
}

const STATES: readonly JobState[] = ["running", "exited", "killed", "reaped"];

/** The records of a folder; [] when there is no file, and what cannot be read as a record is left out. */
export async function readJobs(folder: string): Promise<JobRecord[]> {
  let text: string;
  try {
    text = await readFile(jobsFilePath(folder), "utf8");
  } catch {
    return [];
  }
  try {
    const parsed: unknown = JSON.parse(text);
    const jobs = (parsed as { jobs?: unknown }).jobs;
    return Array.isArray(jobs) ? jobs.filter(isRecord) : [];
  } catch {
    return [];
  }
}

export function writeJobs(folder: string, jobs: readonly JobRecord[]): Promise<void> {
  return writePrivateFile(jobsFilePath(folder), `${JSON.stringify({ version: 1, jobs }, null, 2)}\n`);
}

function isRecord(value: unknown): value is JobRecord {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === "string" &&
    typeof v.command === "string" &&
    typeof v.startedAt === "number" &&
    STATES.includes(v.state as JobState)
  );
}
