import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { builtinTools } from "../src/agent/tools/index.js";
import { MAX_RUNS_PER_SESSION } from "../src/subagents/gateway-subagents.js";
import { type ChatRequestBody, echoReply, type FakeReply } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { waitWithDeadline } from "./helpers/wait-deadline.js";

/**
 * Sub-agents in the gateway (docs/tools.md, Sub-agents): `check_agent_run` reads and cancels a run; a live child
 * keeps its session loaded; the limit per session answers a tool error; a reply cut at the output limit is kept in
 * `artifacts/truncated-output.md`; a call the approvals policy would ask about parks the child and asks in the
 * parent's chat, naming it (only its requester or the owner answers; a cancel drops the prompt). The test
 * transport's owner is alice; bob is allowed.
 */
describe("gateway: sub-agents", () => {
  let t: TestGateway | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const isChild = (body: ChatRequestBody) =>
    String(body.messages[0]?.content ?? "").startsWith("You are a sub-agent of clawdis");
  const childRequests = () => t!.fake.requests.filter((r) => isChild(r.body));

  /** What the child answers (by the requests of its run so far); default: it hangs. */
  let child: (body: ChatRequestBody) => FakeReply = () => ({ hang: "before-headers", text: "late" });

  /**
   * The parent: "spawn N" asks for N spawns in one batch, "check ID" and "cancel ID" call check_agent_run; after a
   * batch it says what the tools answered; anything else is echoed.
   */
  function model(body: ChatRequestBody): FakeReply {
    if (isChild(body)) return child(body);
    const last = body.messages.at(-1);
    const text = last?.role === "user" ? String(last.content) : "";
    const spawn = /^spawn (\d+)$/.exec(text);
    if (spawn) {
      return {
        toolCalls: Array.from({ length: Number(spawn[1]) }, (_, i) => ({
          name: "spawn_agent",
          arguments: { brief: `task ${i + 1}` },
          id: `call_${i + 1}`,
        })),
      };
    }
    const check = /^(check|cancel) (\S+)$/.exec(text);
    if (check) {
      return {
        toolCalls: [
          {
            name: "check_agent_run",
            arguments: { id: check[2], ...(check[1] === "cancel" ? { cancel: true } : {}) },
          },
        ],
      };
    }
    if (last?.role === "tool") {
      const batch = body.messages.slice(body.messages.findLastIndex((m) => m.role === "assistant") + 1);
      return { text: batch.map((m) => String(m.content)).join("\n---\n") };
    }
    return echoReply(body);
  }

  async function start(config: Parameters<typeof startTestGateway>[0] = {}): Promise<TestGateway> {
    t = await startTestGateway({ tools: builtinTools(), ...config });
    t.fake.setDefault(model);
    return t;
  }

  async function say(text: string): Promise<string> {
    const outcome = await done(await t!.chat.inject({ text }));
    return outcome.payloads.map((p) => p.text).join("\n");
  }

  const idOf = (reply: string): string => /Started sub-agent (run-[0-9a-f]{8})/.exec(reply)?.[1] ?? "none";
  const folderOf = (reply: string): string => /Folder: (\S+)/.exec(reply)?.[1] ?? "none";
  const runJson = async (folder: string) => JSON.parse(await readFile(join(folder, "run.json"), "utf8"));

  const childAsked = (n: number) =>
    waitWithDeadline<void>(
      () => `${n} model calls of sub-agents (${childRequests().length} so far)`,
      undefined,
      (resolve) => {
        const check = () => {
          if (childRequests().length >= n) resolve();
        };
        t!.fake.events.on("request", check);
        check();
        return () => t!.fake.events.off("request", check);
      },
    );

  it("check_agent_run reads a running run, then cancels it; the parent is told it was cancelled", async () => {
    await start();
    const spawned = await say("spawn 1");
    const id = idOf(spawned);
    await childAsked(1);
    expect(await say(`check ${id}`)).toMatch(new RegExp(`^Sub-agent ${id}: running since `));
    expect(await say(`cancel ${id}`)).toBe(`Sub-agent ${id}: cancelled.`);
    const sent = await t!.chat.waitForSent(4);
    expect(sent[3]?.text).toBe(
      `echo: [subagent-notice] [sub-agent ${id} cancelled] Its result is in ${join(folderOf(spawned), "result.md")}:\nCancelled (check_agent_run) before it finished.`,
    );
    await t!.idle();
    expect((await runJson(folderOf(spawned))).state).toEqual({ status: "cancelled", reported: true });
    // Ended: check reads its result from its folder.
    expect(await say(`check ${id}`)).toMatch(new RegExp(`^Sub-agent ${id}: cancelled\\. Result .*\\n`));
  });

  it("a live child keeps its session loaded past passivateAfterMinutes; once reported, it is released", async () => {
    await start({ config: { inbound: { reply: { session: { passivateAfterMinutes: 1 } } } } });
    const advance = async (ms: number) => {
      t!.clock.advance(ms);
      await t!.gateway.sessions.settled();
    };
    await say("spawn 1");
    await childAsked(1);
    await t!.idle();
    await advance(60_000);
    await advance(5_000);
    expect(t!.gateway.sessions.peek("main")).toBeDefined();
    expect(t!.gateway.subagents.holds("main")).toBe(true);

    t!.fake.release();
    await t!.chat.waitForSent(2);
    await t!.idle();
    expect(t!.gateway.subagents.holds("main")).toBe(false);
    await advance(60_000);
    await advance(5_000);
    expect(t!.gateway.sessions.peek("main")).toBeUndefined();
  });

  it(`a session runs at most ${MAX_RUNS_PER_SESSION} children at once: one more is a tool error`, async () => {
    await start();
    const reply = await say(`spawn ${MAX_RUNS_PER_SESSION + 1}`);
    const parts = reply.split("\n---\n");
    expect(parts).toHaveLength(MAX_RUNS_PER_SESSION + 1);
    expect(parts.slice(0, MAX_RUNS_PER_SESSION).every((p) => p.startsWith("Started sub-agent run-"))).toBe(
      true,
    );
    expect(parts.at(-1)).toBe(
      `spawn_agent: this session already has ${MAX_RUNS_PER_SESSION} sub-agents running (at most ${MAX_RUNS_PER_SESSION}); wait for one to end or cancel one`,
    );
    await childAsked(MAX_RUNS_PER_SESSION);
    expect(childRequests()).toHaveLength(MAX_RUNS_PER_SESSION);
  });

  it("a reply cut at the output limit fails the run and is kept in artifacts/truncated-output.md", async () => {
    await start();
    child = () => ({ text: "the first half of a long answer", finishReason: "length" });
    const spawned = await say("spawn 1");
    const sent = await t!.chat.waitForSent(2);
    const folder = folderOf(spawned);
    expect(sent[1]?.text).toMatch(
      new RegExp(`^echo: \\[subagent-notice\\] \\[sub-agent ${idOf(spawned)} failed\\]`),
    );
    expect(await readFile(join(folder, "artifacts", "truncated-output.md"), "utf8")).toBe(
      "the first half of a long answer",
    );
    expect(await readFile(join(folder, "result.md"), "utf8")).toBe(
      "The reply was cut off at the output limit; what was written is in artifacts/truncated-output.md.\n",
    );
  });

  it("a child's risky call parks it and asks in the parent's chat naming it; it holds the session; another person's answer is ignored; a cancel drops the prompt", async () => {
    await start({
      config: {
        inbound: { reply: { agent: { approvals: "risky" }, session: { passivateAfterMinutes: 1 } } },
      },
    });
    child = (body) =>
      body.messages.some((m) => m.role === "tool")
        ? { text: "ran it" }
        : { toolCalls: [{ name: "bash", arguments: { command: "echo child >> ran.txt" } }] };
    const spawned = await say("spawn 1");
    const id = idOf(spawned);
    // The child runs beside the parent's turn: its prompt may come before or after the spawn's answer.
    const sent = (await t!.chat.waitForSent(2)).map((m) => m.text);
    const prompt = `Approval needed: sub-agent ${id}'s bash wants to run\necho child >> ran.txt\n`;
    expect(
      sent.filter((text) => text.startsWith(prompt)),
      JSON.stringify(sent),
    ).toHaveLength(1);
    await t!.idle();
    expect((await runJson(folderOf(spawned))).state).toEqual({ status: "waiting-approval", reported: false });
    expect(t!.gateway.approvals.pending("main").map((a) => a.subagent)).toEqual([id]);
    // A waiting child keeps its session loaded.
    t!.clock.advance(65_000);
    await t!.gateway.sessions.settled();
    expect(t!.gateway.sessions.peek("main")).toBeDefined();
    expect(t!.gateway.subagents.holds("main")).toBe(true);
    // bob is neither the person whose turn spawned it nor the owner: his answer is not taken.
    const bob = await done(await t!.chat.inject({ text: "/approve", senderId: "bob" }));
    expect(bob).toMatchObject({ sessionKey: "main", stopReason: "filtered", payloads: [] });
    expect(t!.gateway.approvals.pending("main")).toHaveLength(1);
    expect(childRequests()).toHaveLength(1);

    expect(await say(`check ${id}`)).toMatch(new RegExp(`^Sub-agent ${id}: waiting-approval`));
    expect(await say(`cancel ${id}`)).toBe(`Sub-agent ${id}: cancelled.`);
    await t!.idle();
    expect(t!.gateway.approvals.pending("main")).toEqual([]);
    expect(await say("/approve")).toBe("Nothing in this session is waiting for an approval.");
    expect((await runJson(folderOf(spawned))).state).toEqual({ status: "cancelled", reported: true });
    expect(childRequests()).toHaveLength(1);
    await expect(readFile(join(t!.stateDir, "workspace", "ran.txt"), "utf8")).rejects.toThrow(/ENOENT/);
  });
});
