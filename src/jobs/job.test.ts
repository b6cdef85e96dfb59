import { describe, expect, it } from "vitest";
import {
  describeState,
  type JobEvent,
  type JobRecord,
  nextJob,
  nextJobId,
  refuseStart,
  withReaped,
} from "./job.js";

const running: JobRecord = {
  id: "j1",
  command: "sleep 9",
  cwd: "/w",
  startedAt: 1000,
  state: "running",
  pid: 42,
};

describe("nextJob: the job lifecycle", () => {
  const cases: [string, JobRecord, JobEvent, Partial<JobRecord> | "unchanged"][] = [
    [
      "running, exits with a code: exited with it",
      running,
      { kind: "exit", at: 5000, code: 3, signal: null },
      { state: "exited", exitCode: 3, endedAt: 5000 },
    ],
    [
      "running, ended by a signal (not ours): exited, the signal kept",
      running,
      { kind: "exit", at: 5000, code: null, signal: "SIGSEGV" },
      { state: "exited", signal: "SIGSEGV", endedAt: 5000 },
    ],
    [
      "running, job_kill: killed by job_kill",
      running,
      { kind: "kill", at: 6000, by: "job_kill" },
      { state: "killed", endedBy: "job_kill", endedAt: 6000 },
    ],
    [
      "running, /new: killed by new",
      running,
      { kind: "kill", at: 6000, by: "new" },
      { state: "killed", endedBy: "new" },
    ],
    [
      "running, the gateway stops: reaped",
      running,
      { kind: "reap", at: 7000 },
      { state: "reaped", endedAt: 7000 },
    ],
    [
      "killed, then the exit its kill caused: stays killed",
      { ...running, state: "killed", endedBy: "job_kill", endedAt: 6000 },
      { kind: "exit", at: 6100, code: null, signal: "SIGKILL" },
      "unchanged",
    ],
    [
      "exited, then a kill: stays exited",
      { ...running, state: "exited", exitCode: 0, endedAt: 5000 },
      { kind: "kill", at: 6000, by: "job_kill" },
      "unchanged",
    ],
    [
      "reaped, then an exit: stays reaped",
      { ...running, state: "reaped" },
      { kind: "reap", at: 1 },
      "unchanged",
    ],
  ];
  it.each(cases)("%s", (_name, job, event, expected) => {
    const next = nextJob(job, event);
    if (expected === "unchanged") {
      expect(next).toBe(job);
      return;
    }
    expect(next).toMatchObject(expected);
    // An ended job has no process group any more.
    expect(next.pid).toBeUndefined();
    expect(next.id).toBe("j1");
  });
});

describe("withReaped", () => {
  it("lists a running job this gateway does not run as reaped, and leaves the others", () => {
    const records: JobRecord[] = [
      running,
      { ...running, id: "j2" },
      { ...running, id: "j3", state: "exited", exitCode: 0, endedAt: 2000 },
    ];
    const seen = withReaped(records, new Set(["j2"]), 9000);
    expect(seen.map((j) => [j.id, j.state])).toEqual([
      ["j1", "reaped"],
      ["j2", "running"],
      ["j3", "exited"],
    ]);
    expect(seen[0]?.endedAt).toBe(9000);
    expect(describeState(seen[0] as JobRecord)).toMatch(/^reaped/);
  });
});

describe("nextJobId", () => {
  it.each([
    [[], "j1"],
    [["j1"], "j2"],
    [["j3", "j1"], "j4"],
    [["x9", "j2"], "j3"],
  ] as [string[], string][])("after %j: %s", (ids, expected) => {
    expect(nextJobId(ids.map((id) => ({ ...running, id })))).toBe(expected);
  });
});

describe("refuseStart: the limits", () => {
  const limits = { perSession: 4, total: 16 };
  it.each([
    [{ session: 0, total: 0 }, undefined],
    [{ session: 3, total: 15 }, undefined],
    [{ session: 4, total: 4 }, /this session already runs 4 background jobs.*\(4\)/],
    [{ session: 1, total: 16 }, /the gateway already runs 16 background jobs.*\(16\)/],
  ] as [{ session: number; total: number }, RegExp | undefined][])("%j", (running, expected) => {
    const why = refuseStart(running, limits);
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toMatch(expected);
  });
});
