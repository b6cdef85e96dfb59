import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitWithDeadline } from "../../test/helpers/wait-deadline.js";
import { bashTool } from "../agent/tools/bash.js";
import { systemClock } from "../core/clock.js";
import type { ToolContext, ToolDefinition } from "../plugin-api/types.js";
import type { InternalInput } from "../runtime/internal-input.js";
import { GatewayJobs, type JobMessage } from "./gateway-jobs.js";
import { droppedLine } from "./job-log.js";
import { readJobs, writeJobs } from "./jobs-file.js";

/**
 * GatewayJobs with real processes and real files in a temp folder (docs/tools.md, Background jobs): the wrapped
 * bash starts a job at once, its result is handed in as automated `job-result` input, the limits refuse, a kill
 * ends the whole process group, and the stop records `reaped`, as a later gateway reads it.
 */
describe("GatewayJobs", () => {
  let dir: string;
  let submitted: InternalInput[];
  let jobs: GatewayJobs[];
  const message: JobMessage = {
    channel: "echo-transport",
    chatId: "chat-1",
    chatType: "direct",
    senderId: "alice",
    authority: "owner",
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-jobs-"));
    submitted = [];
    jobs = [];
  });
  afterEach(async () => {
    for (const j of jobs) await j.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const folder = () => join(dir, "session-1");
  function make(limits = { perSession: 4, total: 16 }): GatewayJobs {
    const made = new GatewayJobs({
      clock: systemClock,
      logger: { info: () => {}, warn: () => {} },
      folderOf: async (key) => (key === "main" ? folder() : undefined),
      toolNamesFor: () => ["bash", "job_status"],
      submit: async (input) => {
        submitted.push(input);
        return { status: "accepted" } as never;
      },
      limits,
    });
    jobs.push(made);
    return made;
  }
  function tools(made: GatewayJobs): Map<string, ToolDefinition> {
    return new Map(made.withJobTools("main", message, [bashTool()]).map((t) => [t.name, t]));
  }
  const context = (): ToolContext => ({
    signal: new AbortController().signal,
    cwd: dir,
    sessionKey: "main",
    timeoutMs: 10_000,
  });
  async function call(t: Map<string, ToolDefinition>, name: string, args: Record<string, unknown>) {
    const tool = t.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    return tool.execute(args, context());
  }
  const results = (count: number) =>
    waitWithDeadline<void>(
      () => `${count} job results (have ${submitted.length})`,
      undefined,
      (resolve) => {
        const timer = setInterval(() => submitted.length >= count && resolve(), 20);
        return () => clearInterval(timer);
      },
    );
  /** Resolves once no process of group `pid` is left. */
  const groupGone = (pid: number) =>
    waitWithDeadline<void>(`process group ${pid} to be gone`, undefined, (resolve) => {
      const timer = setInterval(() => {
        try {
          process.kill(-pid, 0);
        } catch {
          resolve();
        }
      }, 20);
      return () => clearInterval(timer);
    });

  it("starts a job at once; its exit code and output tail come back as automated job-result input", async () => {
    const made = make();
    const t = tools(made);
    const started = await call(t, "bash", {
      command: "echo first; echo second >&2; exit 3",
      background: true,
    });
    expect(started).toMatchObject({ ok: true, output: expect.stringMatching(/^started background job j1 /) });
    await results(1);
    expect(submitted[0]).toMatchObject({
      sessionKey: "main",
      kind: "job-result",
      authority: "automated",
      allowedTools: ["bash", "job_status"],
      route: { channel: "echo-transport", chatId: "chat-1", chatType: "direct" },
    });
    expect(submitted[0]?.text).toMatch(
      /^Background job j1 {2}exited with code 3, ran \d+s {2}echo first; echo second >&2; exit 3\nlast output \(jobs\/j1\.log\):\nfirst\nsecond\n$/,
    );
    expect(await readFile(join(folder(), "jobs", "j1.log"), "utf8")).toBe("first\nsecond\n");
    expect((await readJobs(folder()))[0]).toMatchObject({ id: "j1", state: "exited", exitCode: 3 });
    expect(made.hasLive("main")).toBe(false);
    expect((await call(t, "job_status", {})).output).toMatch(/^j1 {2}exited with code 3/);
    expect((await call(t, "job_output", { id: "j1", offset: 6, length: 6 })).output).toBe(
      "[j1.log: 13 bytes; bytes 6 to 12]\nsecond",
    );
    expect(await call(t, "job_output", { id: "j9" })).toMatchObject({ ok: false });
  });

  it("past the per-session limit bash answers a clear error; job_kill ends the whole group, with no result", async () => {
    const made = make({ perSession: 1, total: 16 });
    const t = tools(made);
    // bash leaves a sleep behind in the group: the kill must end it too.
    await call(t, "bash", { command: "sleep 60 & echo $! > sleeper.pid; wait", background: true });
    expect(made.hasLive("main")).toBe(true);
    expect(made.running("main").map((j) => j.id)).toEqual(["j1"]);
    const refused = await call(t, "bash", { command: "true", background: true });
    expect(refused).toMatchObject({ ok: false });
    expect(refused.output).toMatch(/^bash: this session already runs 1 background jobs, .*\(1\)/);
    const pid = (await readJobs(folder()))[0]?.pid ?? 0;
    expect(pid).toBeGreaterThan(0);
    const killed = await call(t, "job_kill", { id: "j1" });
    expect(killed.output).toMatch(/^j1 {2}killed \(job_kill\)/);
    await groupGone(pid);
    expect(made.hasLive("main")).toBe(false);
    // A job after it ends by itself: its result is the only one handed in.
    await call(t, "bash", { command: "echo later", background: true });
    await results(1);
    expect(submitted.map((s) => s.text.split("  ")[0])).toEqual(["Background job j2"]);
    expect((await readJobs(folder())).map((j) => [j.id, j.state])).toEqual([
      ["j1", "killed"],
      ["j2", "exited"],
    ]);
  });

  it("the stop kills what runs and records it reaped; a later gateway lists it reaped, its log readable", async () => {
    const first = make();
    await call(tools(first), "bash", { command: "echo started; exec sleep 60", background: true });
    const pid = (await readJobs(folder()))[0]?.pid ?? 0;
    await waitWithDeadline<void>("the job's first output", undefined, (resolve) => {
      const timer = setInterval(
        () =>
          void readFile(join(folder(), "jobs", "j1.log"), "utf8").then(
            (text) => text.includes("started") && resolve(),
            () => {},
          ),
        20,
      );
      return () => clearInterval(timer);
    });
    first.halt();
    expect(await call(tools(first), "bash", { command: "true", background: true })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/gateway is stopping/),
    });
    await first.stop();
    await groupGone(pid);
    expect((await readJobs(folder()))[0]).toMatchObject({ state: "reaped" });

    // A running record its gateway never ended (a kill -9) reads as reaped too.
    await writeJobs(folder(), [
      ...(await readJobs(folder())),
      { id: "j2", command: "x", cwd: dir, startedAt: 1, state: "running", pid: 1 },
    ]);
    const second = make();
    const t = tools(second);
    expect((await call(t, "job_status", {})).output.split("\n")).toEqual([
      expect.stringMatching(/^j1 {2}reaped \(/),
      expect.stringMatching(/^j2 {2}reaped \(/),
    ]);
    expect((await call(t, "job_output", { id: "j1" })).output).toBe(
      "[j1.log: 8 bytes; bytes 0 to 8]\nstarted\n",
    );
    expect(submitted).toEqual([]);
  });

  it("killSession (/new, an unload) ends the session's jobs without a result", async () => {
    const made = make();
    await call(tools(made), "bash", { command: "exec sleep 60", background: true });
    const pid = (await readJobs(folder()))[0]?.pid ?? 0;
    await made.killSession("main", "new");
    await groupGone(pid);
    expect((await readJobs(folder()))[0]).toMatchObject({ state: "killed", endedBy: "new" });
    expect(made.hasLive("main")).toBe(false);
  });

  it("a job that prints far past its log's bound leaves the newest output and the count of what was dropped", async () => {
    const made = new GatewayJobs({
      clock: systemClock,
      logger: { info: () => {}, warn: () => {} },
      folderOf: async () => folder(),
      toolNamesFor: () => [],
      submit: async (input) => {
        submitted.push(input);
        return { status: "accepted" } as never;
      },
      logLimitBytes: 1000,
    });
    jobs.push(made);
    const total = 20_000_000;
    await call(tools(made), "bash", {
      command: `head -c ${total} /dev/zero | tr '\\0' x; echo END`,
      background: true,
    });
    await results(1);
    const text = await readFile(join(folder(), "jobs", "j1.log"), "utf8");
    const [first, body] = [text.slice(0, text.indexOf("\n") + 1), text.slice(text.indexOf("\n") + 1)];
    const dropped = Number(/the first (\d+) bytes/.exec(first)?.[1]);
    expect(first).toBe(droppedLine(dropped, 1000));
    expect(dropped + body.length).toBe(total + "END\n".length);
    expect(body.length).toBeLessThanOrEqual(1000);
    expect(body.endsWith("xxxEND\n")).toBe(true);
    expect(submitted[0]?.text).toMatch(/xEND\n$/);
  });

  it("after an idle expiry (a new folder for the key) the earlier conversation's running job is still listed and read", async () => {
    let current = folder();
    const made = new GatewayJobs({
      clock: systemClock,
      logger: { info: () => {}, warn: () => {} },
      folderOf: async () => current,
      toolNamesFor: () => [],
      submit: async (input) => {
        submitted.push(input);
        return { status: "accepted" } as never;
      },
    });
    jobs.push(made);
    const t = tools(made);
    await call(t, "bash", { command: "echo old; exec sleep 60", background: true });
    current = join(dir, "session-2");
    expect((await call(t, "job_status", {})).output).toMatch(
      /^j1 {2}running, ran \d+s {2}echo old; exec sleep 60$/,
    );
    await waitWithDeadline<void>("the earlier job's output through job_output", undefined, (resolve) => {
      const timer = setInterval(
        () => void call(t, "job_output", { id: "j1" }).then((r) => r.output.endsWith("\nold\n") && resolve()),
        20,
      );
      return () => clearInterval(timer);
    });
    expect((await call(t, "job_kill", { id: "j1" })).output).toMatch(/^j1 {2}killed \(job_kill\)/);
    expect((await readJobs(folder()))[0]).toMatchObject({ state: "killed" });
  });

  it("bash alone refuses background: true", async () => {
    const result = await bashTool().execute({ command: "true", background: true }, context());
    expect(result).toMatchObject({
      ok: false,
      output: expect.stringMatching(/background jobs are not available/),
    });
  });
});
