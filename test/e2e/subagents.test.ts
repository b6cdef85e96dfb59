import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ChatRequestBody, echoReply, type FakeReply } from "../fakes/openai-server.js";
import { cleanupAll, E2eState, type GatewayProcess } from "./harness.js";

/**
 * Sub-agents through the real binary (docs/tools.md, Sub-agents): a child spawned by the owner's turn runs beside
 * the session, which answers other messages meanwhile; its result arrives later as a notice naming result.md, in
 * a turn of its own; a stop or a kill -9 during the child's run ends it `owner_restarted`, reported at the next
 * start, and its tool call never runs again.
 */
describe("e2e: sub-agents", () => {
  afterEach(cleanupAll);

  const CHAT = "chat-s";
  const isChild = (body: ChatRequestBody) =>
    String(body.messages[0]?.content ?? "").startsWith("You are a sub-agent of clawdis");
  const childAfterTool = (state: E2eState) =>
    state.fake.requests.filter((r) => isChild(r.body) && r.body.messages.some((m) => m.role === "tool"));
  const childRequests = (state: E2eState) => state.fake.requests.filter((r) => isChild(r.body));

  /**
   * The model: the parent spawns on "spawn please" and says what the tool answered; the child runs one bash call
   * (a line in child-runs.txt), then its answer hangs until `fake.release()`; anything else is echoed.
   */
  function model(body: ChatRequestBody): FakeReply {
    const last = body.messages.at(-1);
    if (isChild(body)) {
      if (!body.messages.some((m) => m.role === "tool")) {
        return { toolCalls: [{ name: "bash", arguments: { command: "echo ran >> child-runs.txt" } }] };
      }
      return { hang: "before-headers", text: "child result: 42" };
    }
    if (last?.role === "user" && last.content === "spawn please") {
      return { toolCalls: [{ name: "spawn_agent", arguments: { brief: "count to 42" } }] };
    }
    if (last?.role === "tool") return { text: `parent saw: ${String(last.content)}` };
    return echoReply(body);
  }

  async function until(
    what: string,
    check: () => Promise<boolean> | boolean,
    seen: () => Promise<string> | string = () => "",
  ): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out after 15 s waiting for ${what}; ${await seen()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function say(gw: GatewayProcess, text: string): Promise<void> {
    const answer = await gw.echo({ chatId: CHAT, senderId: "alice", text }, { wait: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }

  /** The run's folder, from the id the spawn's result named. */
  async function runFolderOf(gw: GatewayProcess): Promise<{ id: string; folder: string }> {
    const spawned = (await gw.outbox()).find((o) => o.text.startsWith("parent saw: Started sub-agent"));
    expect(spawned, JSON.stringify(await gw.outbox())).toBeDefined();
    const id = /Started sub-agent (run-[0-9a-f]{8})/.exec(spawned?.text ?? "")?.[1] ?? "";
    const folder = /Folder: (\S+)/.exec(spawned?.text ?? "")?.[1] ?? "";
    expect(folder.endsWith(join("subagents", id))).toBe(true);
    return { id, folder };
  }

  const runJson = async (folder: string) =>
    JSON.parse(await readFile(join(folder, "run.json"), "utf8")) as {
      state: { status: string; reported: boolean };
      tools: string[];
    };
  const childRuns = async (state: E2eState) =>
    (await readFile(join(state.dir, "workspace", "child-runs.txt"), "utf8")).split("\n").filter(Boolean)
      .length;

  it("the result arrives as a later notice naming result.md while the session answers other messages", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    state.fake.setDefault(model);
    const gw = await state.startGateway();
    await say(gw, "spawn please");
    const { id, folder } = await runFolderOf(gw);
    await until("the child's model call after its bash call", () => childAfterTool(state).length === 1);
    // The child has the parent's tools but the three it never gets.
    const offered = childRequests(state)[0]?.body.tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain("bash");
    expect(offered).not.toContain("spawn_agent");
    expect(offered).not.toContain("check_agent_run");
    expect(offered).not.toContain("send_file");
    expect((await runJson(folder)).state).toEqual({ status: "running", reported: false });
    const task = await readFile(join(folder, "task.md"), "utf8");
    expect(task).toContain("count to 42");
    expect(task).toMatch(/Requested by owner echo-transport:alice/);

    // The session answers meanwhile; the child is still running.
    await say(gw, "how are you");
    expect((await gw.outbox()).map((o) => o.text)).toContain("echo: how are you");
    expect((await runJson(folder)).state.status).toBe("running");

    state.fake.release();
    const notice = `echo: [subagent-notice] [sub-agent ${id} done] Its result is in ${join(folder, "result.md")}:\nchild result: 42`;
    await until(
      "the notice's turn to answer in the chat",
      async () => (await gw.outbox()).some((o) => o.text === notice),
      async () => `outbox ${JSON.stringify(await gw.outbox())}\n${gw.stderr.tail()}`,
    );
    expect((await gw.outbox()).filter((o) => o.chatId === CHAT).map((o) => o.text)).toEqual([
      expect.stringMatching(/^parent saw: Started sub-agent run-/),
      "echo: how are you",
      notice,
    ]);
    expect(await readFile(join(folder, "result.md"), "utf8")).toBe("child result: 42\n");
    await until("run.json marked reported", async () => (await runJson(folder)).state.reported);
    expect((await runJson(folder)).state).toEqual({ status: "done", reported: true });
    expect(await childRuns(state)).toBe(1);
    // The child's messages are in its own transcript, not the parent's.
    expect(await readFile(join(folder, "transcript.jsonl"), "utf8")).toContain("child result: 42");
    const store = await state.readStore();
    const parent = JSON.stringify(await state.transcript(store.main?.sessionId ?? ""));
    expect(parent).not.toContain("echo ran >> child-runs.txt");
    expect.soft(await gw.stop(), gw.stderr.tail()).toEqual({ code: 0, signal: null });
  });

  it.each(["stop", "kill -9"] as const)(
    "a %s during a child's run ends it owner_restarted, reported at the next start; its tool call does not run again",
    async (how) => {
      const state = await E2eState.create({ allowFrom: ["alice"] });
      state.fake.setDefault(model);
      const first = await state.startGateway();
      await say(first, "spawn please");
      const { id, folder } = await runFolderOf(first);
      await until("the child's model call after its bash call", () => childAfterTool(state).length === 1);
      if (how === "stop") {
        expect.soft(await first.stop(), first.stderr.tail()).toEqual({ code: 0, signal: null });
        // Drained: ended, written down, not yet reported (the stopping gateway takes no new input).
        expect((await runJson(folder)).state).toEqual({ status: "owner_restarted", reported: false });
      } else {
        expect((await first.kill()).signal).toBe("SIGKILL");
        expect((await runJson(folder)).state).toEqual({ status: "running", reported: false });
      }
      const asked = childRequests(state).length;

      const second = await state.startGateway();
      const notice = `echo: [subagent-notice] [sub-agent ${id} owner_restarted] Its result is in ${join(folder, "result.md")}:\nThe gateway stopped or restarted`;
      await until(
        "the owner_restarted notice in the chat",
        async () => (await second.outbox()).some((o) => o.chatId === CHAT && o.text.startsWith(notice)),
        async () => `outbox ${JSON.stringify(await second.outbox())}\n${second.stderr.tail()}`,
      );
      await until("run.json marked reported", async () => (await runJson(folder)).state.reported);
      expect((await runJson(folder)).state).toEqual({ status: "owner_restarted", reported: true });
      await say(second, "still there?");
      expect(childRequests(state)).toHaveLength(asked);
      expect(await childRuns(state)).toBe(1);
      expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });

      // A third start reports nothing again.
      const third = await state.startGateway();
      await say(third, "and now?");
      expect((await third.outbox()).map((o) => o.text)).toEqual([expect.stringContaining("and now?")]);
      expect(await childRuns(state)).toBe(1);
      expect.soft(await third.stop(), third.stderr.tail()).toEqual({ code: 0, signal: null });
    },
  );
});
