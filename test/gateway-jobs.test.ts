import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bashTool } from "../src/agent/tools/bash.js";
import { readJobs } from "../src/jobs/jobs-file.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { waitWithDeadline } from "./helpers/wait-deadline.js";

/**
 * Background jobs in the gateway (docs/tools.md, Background jobs): a session with a running job is not passivated
 * (it is once the job's result turn is over), and `/new` kills the jobs of the conversation it leaves.
 */
describe("gateway: background jobs belong to their session", () => {
  let t: TestGateway;
  afterEach(async () => {
    await t?.close();
  });

  /** The folder of the session's conversation now. */
  async function folder(): Promise<string> {
    const entry = await t.gateway.store.get("main");
    if (!entry) throw new Error("no main session");
    return join(t.gateway.store.dir, entry.sessionId);
  }

  /** Has the model start `command` as a background job in the first message's turn. */
  async function startJob(command: string): Promise<void> {
    t.fake.enqueue(
      { toolCalls: [{ name: "bash", arguments: { command, background: true } }] },
      { text: "started" },
    );
    await done(await t.chat.inject({ text: "go" }));
    await t.idle();
    expect(t.gateway.jobs.running("main").map((j) => j.id)).toEqual(["j1"]);
  }

  /** Moves the clock and lets a final save that it started finish. */
  async function advance(ms: number): Promise<void> {
    t.clock.advance(ms);
    await t.gateway.sessions.settled();
  }

  it("a session with a running job stays loaded past the idle time; after its result it is unloaded", async () => {
    t = await startTestGateway({
      config: { inbound: { reply: { session: { passivateAfterMinutes: 1 } } } },
      tools: [bashTool()],
    });
    const workspace = join(t.stateDir, "workspace");
    await startJob("while [ ! -f go ]; do sleep 0.05; done; echo finished");
    const warm = t.gateway.sessions.peek("main");
    expect(warm).toBeDefined();
    await advance(60_000);
    await advance(5_000);
    expect(t.gateway.sessions.peek("main")).toBe(warm);

    await writeFile(join(workspace, "go"), "");
    // The result is a turn of its own: the model is asked about it alone.
    await t.fake.waitForRequest(3);
    await t.chat.waitForSent(2);
    await t.idle();
    expect(t.chat.sent.map((m) => m.text)).toEqual([
      "started",
      expect.stringMatching(
        /^echo: \[job-result\] Background job j1 {2}exited with code 0, ran 1m5s {2}while .*\nlast output \(jobs\/j1\.log\):\nfinished$/,
      ),
    ]);
    expect(t.gateway.jobs.hasLive("main")).toBe(false);
    await advance(60_000);
    await advance(5_000);
    expect(t.gateway.sessions.peek("main")).toBeUndefined();
  });

  it("a job that ends while a person's turn runs waits for its own turn and never joins it", async () => {
    t = await startTestGateway({ tools: [bashTool()] });
    const workspace = join(t.stateDir, "workspace");
    await startJob("while [ ! -f go ]; do sleep 0.05; done; echo done");
    t.fake.enqueue({ hang: "before-headers", text: "answer to the person" });
    const person = await t.chat.inject({ text: "a long question" });
    await t.fake.waitForRequest(3);
    await writeFile(join(workspace, "go"), "");
    // The result is accepted (journaled) while the person's turn still runs.
    await waitWithDeadline<void>("the job result accepted in the journal", undefined, (resolve) => {
      const timer = setInterval(
        () =>
          void readFile(join(t.stateDir, "journal", "inbound.jsonl"), "utf8").then(
            (text) => text.includes('"kind":"job-result"') && resolve(),
            () => {},
          ),
        20,
      );
      return () => clearInterval(timer);
    });
    t.fake.enqueue({ text: "result read" });
    t.fake.release();
    await done(person);
    await t.chat.waitForSent(3);
    await t.idle();
    expect(t.chat.sent.map((m) => m.text)).toEqual(["started", "answer to the person", "result read"]);
    const users = (n: number) =>
      t.fake.requests[n]?.body.messages.filter((m) => m.role === "user").map((m) => String(m.content)) ?? [];
    expect(users(2).at(-1)).toBe("a long question");
    expect(users(3).at(-1)).toMatch(/^\[job-result\] Background job j1 {2}exited with code 0/);
    expect(users(3).at(-2)).toBe("a long question");
    expect(t.fake.requests).toHaveLength(4);
  });

  it("/new kills the running jobs of the conversation it leaves; their record says so", async () => {
    t = await startTestGateway({ tools: [bashTool()] });
    await startJob("exec sleep 60");
    const before = await folder();
    const pid = (await readJobs(before))[0]?.pid ?? 0;
    expect(pid).toBeGreaterThan(0);
    await done(await t.chat.inject({ text: "/new" }));
    await t.idle();
    await waitWithDeadline<void>("job j1 recorded killed by /new", undefined, (resolve) => {
      const timer = setInterval(
        () =>
          void readFile(join(before, "jobs", "jobs.json"), "utf8").then(
            (text) => text.includes('"endedBy": "new"') && resolve(),
            () => {},
          ),
        20,
      );
      return () => clearInterval(timer);
    });
    expect(await folder()).not.toBe(before);
    expect(t.gateway.jobs.hasLive("main")).toBe(false);
    // Its whole process group is gone.
    await waitWithDeadline<void>(`process group ${pid} to be gone`, undefined, (resolve) => {
      const timer = setInterval(() => {
        try {
          process.kill(-pid, 0);
        } catch {
          resolve();
        }
      }, 20);
      return () => clearInterval(timer);
    });
  });
});
