import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitWithDeadline } from "../helpers/wait-deadline.js";
import { cleanupAll, E2eState, type GatewayProcess } from "./harness.js";

/**
 * Background jobs through the real binary (docs/tools.md, Background jobs): a job started with `bash` and
 * `background: true` ends while the person chats, and its result arrives as a turn of its own; a gateway stop
 * kills the job's whole process group and the next gateway lists it `reaped`, its log readable.
 */
describe("e2e: background jobs", () => {
  afterEach(cleanupAll);

  /** The last user text of each model request, in order. */
  const asked = (state: E2eState): string[] =>
    state.fake.requests.map((r) => {
      const users = r.body.messages.filter((m) => m.role === "user");
      return String(users.at(-1)?.content ?? "");
    });
  /** The tool results a request carried. */
  const toolResults = (state: E2eState, n: number): string[] =>
    (state.fake.requests[n - 1]?.body.messages ?? [])
      .filter((m) => m.role === "tool")
      .map((m) => String(m.content));

  async function say(gw: GatewayProcess, text: string): Promise<string> {
    const answer = await gw.echo({ chatId: "chat-j", senderId: "alice", text }, { wait: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return JSON.stringify(answer.body);
  }

  /** The session folder of the primary session (`<state>/sessions/<sessionId>`). */
  async function folder(state: E2eState): Promise<string> {
    const entry = (await state.readStore()).main;
    if (!entry) throw new Error("no main session");
    return join(state.dir, "sessions", entry.sessionId);
  }

  /** Resolves once no process of group `pid` is left. */
  const groupGone = (pid: number) =>
    waitWithDeadline<void>(`process group ${pid} to be gone`, undefined, (resolve) => {
      const timer = setInterval(() => {
        try {
          process.kill(-pid, 0);
        } catch {
          resolve();
        }
      }, 50);
      return () => clearInterval(timer);
    });

  it("a job's result arrives as its own turn while the person chats meanwhile", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const gw = await state.startGateway();
    const workspace = join(state.dir, "workspace");
    // The job waits for a file the test writes once the person has chatted meanwhile.
    const command = "while [ ! -f go ]; do sleep 0.05; done; echo built ok; exit 4";
    fake.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command, background: true } }] },
      { text: "started it" },
    );
    await say(gw, "build it in the background");
    expect(toolResults(state, 2)).toEqual([expect.stringMatching(/^started background job j1 /)]);

    // Meanwhile: the person chats, /status lists the running job.
    await say(gw, "how are you?");
    await say(gw, "/status");
    expect(fake.requests).toHaveLength(3);
    await writeFile(join(workspace, "go"), "");
    await fake.waitForRequest(4);
    const outbox = () => gw.outbox();
    await waitWithDeadline<void>("the job result's reply in the outbox", undefined, (resolve) => {
      const timer = setInterval(
        () =>
          void outbox().then(
            (o) => o.length >= 4 && resolve(),
            () => {},
          ),
        50,
      );
      return () => clearInterval(timer);
    });
    const texts = (await outbox()).map((o) => [o.chatId, o.text]);
    expect(texts[0]).toEqual(["chat-j", "started it"]);
    expect(texts[1]).toEqual(["chat-j", "echo: how are you?"]);
    expect(texts[2]?.[1]).toMatch(/^Job j1 running for \d+s: while \[ ! -f go \]/m);
    // The result: a turn of its own (not joined with a person's message), in the chat the job was started from.
    expect(asked(state)[3]).toMatch(
      /^\[job-result\] Background job j1 {2}exited with code 4, ran \d+s {2}while .*\nlast output \(jobs\/j1\.log\):\nbuilt ok\n$/,
    );
    expect(texts[3]).toEqual(["chat-j", expect.stringMatching(/^echo: \[job-result\] Background job j1/)]);
    const jobs = JSON.parse(await readFile(join(await folder(state), "jobs", "jobs.json"), "utf8"));
    expect(jobs.jobs).toEqual([expect.objectContaining({ id: "j1", state: "exited", exitCode: 4 })]);
    expect.soft(await gw.stop(), gw.stderr.tail()).toEqual({ code: 0, signal: null });
  });

  it("a gateway stop kills the job's process group; after the restart it is listed reaped, its log readable", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const first = await state.startGateway();
    // It leaves a child behind in its group, which the stop must end too.
    const command = "echo working; sleep 300 & wait";
    fake.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command, background: true } }] },
      { text: "on it" },
    );
    await say(first, "run the long one");
    const jobsFile = join(await folder(state), "jobs", "jobs.json");
    const log = join(await folder(state), "jobs", "j1.log");
    await waitWithDeadline<void>("the job's first output in jobs/j1.log", undefined, (resolve) => {
      const timer = setInterval(
        () =>
          void readFile(log, "utf8").then(
            (text) => text === "working\n" && resolve(),
            () => {},
          ),
        50,
      );
      return () => clearInterval(timer);
    });
    const pid = JSON.parse(await readFile(jobsFile, "utf8")).jobs[0].pid as number;
    expect(pid).toBeGreaterThan(0);
    expect.soft(await first.stop(), first.stderr.tail()).toEqual({ code: 0, signal: null });
    await groupGone(pid);
    expect(JSON.parse(await readFile(jobsFile, "utf8")).jobs).toEqual([
      expect.objectContaining({ id: "j1", state: "reaped" }),
    ]);

    // Without a gateway, and through the next one: listed reaped; the model reads its state and its log.
    const shown = await state.cli(["sessions", "show", "main"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /background jobs:\n {2}j1 {2}reaped \(.*\), ran \d+s {2}echo working; sleep 300 & wait/,
    );
    const second = await state.startGateway();
    fake.enqueue(
      {
        toolCalls: [
          { name: "job_status", arguments: { id: "j1" } },
          { name: "job_output", arguments: { id: "j1" } },
        ],
      },
      { text: "it was reaped" },
    );
    await say(second, "how is the long one?");
    // The last two tool results: this turn's (the first job's start is in the history before them).
    const results = toolResults(state, fake.requests.length).slice(-2);
    expect(results).toEqual([
      expect.stringMatching(/^j1 {2}reaped \(the gateway that ran it stopped; its log is kept\)/),
      "[j1.log: 8 bytes; bytes 0 to 8]\nworking\n",
    ]);
    const again = await state.cli(["sessions", "show", "main", "--json"]);
    expect(JSON.parse(again.stdout).jobs).toEqual([
      expect.objectContaining({ record: expect.objectContaining({ id: "j1", state: "reaped" }) }),
    ]);
    expect(existsSync(log)).toBe(true);
    expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });
  });
});
