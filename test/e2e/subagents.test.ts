import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ChatRequestBody, echoReply, type FakeReply } from "../fakes/openai-server.js";
import { cleanupAll, E2eState, type GatewayProcess } from "./harness.js";
import { ALICE, privateChat, telegramE2e } from "./telegram-harness.js";

/**
 * Sub-agents through the real binary (docs/tools.md, Sub-agents): a child spawned by the owner's turn runs beside
 * the session, which answers other messages meanwhile; its result arrives later as a notice naming result.md, in
 * a turn of its own. A stop parks a running child at its next safe point and the next start resumes it from its
 * transcript (a kill -9's child too, when its last batch is complete); one killed in the middle of a call ends
 * `owner_restarted`. A risky call of a child asks in the parent's chat, naming the child; the answer resumes it.
 * No tool call ever runs twice.
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
   * (`command`: a line in child-runs.txt), then answers "child result: 42", which hangs until `fake.release()`
   * unless `hang` is false, and quotes what its call gave (`quote`); anything else is echoed.
   */
  const model =
    (options: { command?: string; hang?: boolean; quote?: boolean } = {}) =>
    (body: ChatRequestBody): FakeReply => {
      const last = body.messages.at(-1);
      if (isChild(body)) {
        if (!body.messages.some((m) => m.role === "tool")) {
          const command = options.command ?? "echo ran >> child-runs.txt";
          return { toolCalls: [{ name: "bash", arguments: { command } }] };
        }
        const result = body.messages.find((m) => m.role === "tool");
        const text = options.quote ? `child saw: ${String(result?.content)}` : "child result: 42";
        return options.hang === false ? { text } : { hang: "before-headers", text };
      }
      if (last?.role === "user" && last.content === "spawn please") {
        return { toolCalls: [{ name: "spawn_agent", arguments: { brief: "count to 42" } }] };
      }
      if (last?.role === "tool") return { text: `parent saw: ${String(last.content)}` };
      return echoReply(body);
    };

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
    (await readFile(join(state.dir, "workspace", "child-runs.txt"), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean).length;
  const noticeOf = (id: string, folder: string, status: string) =>
    `echo: [subagent-notice] [sub-agent ${id} ${status}] Its result is in ${join(folder, "result.md")}:\n`;
  async function untilNotice(gw: GatewayProcess, start: string): Promise<string> {
    await until(
      `the notice starting ${JSON.stringify(start)} in the chat`,
      async () => (await gw.outbox()).some((o) => o.chatId === CHAT && o.text.startsWith(start)),
      async () => `outbox ${JSON.stringify(await gw.outbox())}\n${gw.stderr.tail()}`,
    );
    return (await gw.outbox()).find((o) => o.text.startsWith(start))?.text ?? "";
  }

  it("the result arrives as a later notice naming result.md while the session answers other messages", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    state.fake.setDefault(model());
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
    "a %s while a child waits for its model after a complete batch: the next start resumes it from its transcript; its result arrives; its call ran once",
    async (how) => {
      const state = await E2eState.create({ allowFrom: ["alice"] });
      state.fake.setDefault(model());
      const first = await state.startGateway();
      await say(first, "spawn please");
      const { id, folder } = await runFolderOf(first);
      await until("the child's model call after its bash call", () => childAfterTool(state).length === 1);
      if (how === "stop") {
        expect.soft(await first.stop(), first.stderr.tail()).toEqual({ code: 0, signal: null });
        // Drained at its safe point: parked, to go on after the next start.
        expect((await runJson(folder)).state).toEqual({ status: "parked", reported: false });
      } else {
        expect((await first.kill()).signal).toBe("SIGKILL");
        expect((await runJson(folder)).state).toEqual({ status: "running", reported: false });
      }
      state.fake.release();

      const second = await state.startGateway();
      const notice = await untilNotice(second, noticeOf(id, folder, "done"));
      expect(notice).toBe(`${noticeOf(id, folder, "done")}child result: 42`);
      await until("run.json marked reported", async () => (await runJson(folder)).state.reported);
      expect((await runJson(folder)).state).toEqual({ status: "done", reported: true });
      // It went on from its transcript: the resumed call carries its bash call's result, which did not run again.
      expect(
        childAfterTool(state)
          .at(-1)
          ?.body.messages.filter((m) => m.role === "tool"),
      ).toHaveLength(1);
      expect(await childRuns(state)).toBe(1);
      expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });

      // A third start resumes and reports nothing again.
      const asked = childRequests(state).length;
      const third = await state.startGateway();
      await say(third, "and now?");
      expect((await third.outbox()).map((o) => o.text)).toEqual([expect.stringContaining("and now?")]);
      expect(childRequests(state)).toHaveLength(asked);
      expect(await childRuns(state)).toBe(1);
      expect.soft(await third.stop(), third.stderr.tail()).toEqual({ code: 0, signal: null });
    },
  );

  it("a SIGTERM restart during a child's slow tool batch: the batch finishes, the child resumes after the start, its result arrives, no tool ran twice", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    state.fake.setDefault(model({ command: "sleep 2; echo ran >> child-runs.txt", hang: false }));
    const first = await state.startGateway();
    await say(first, "spawn please");
    const { id, folder } = await runFolderOf(first);
    await until("the child's bash call to start", async () =>
      (await readFile(join(folder, "logs", "run.log"), "utf8").catch(() => "")).includes("tool-call bash"),
    );
    expect.soft(await first.stop(), first.stderr.tail()).toEqual({ code: 0, signal: null });
    // The batch ran to its end before the stop; then the child parked.
    expect(await childRuns(state)).toBe(1);
    expect((await runJson(folder)).state).toEqual({ status: "parked", reported: false });
    expect(childAfterTool(state)).toHaveLength(0);

    const second = await state.startGateway();
    const notice = await untilNotice(second, noticeOf(id, folder, "done"));
    expect(notice).toBe(`${noticeOf(id, folder, "done")}child result: 42`);
    await until("run.json marked reported", async () => (await runJson(folder)).state.reported);
    expect(childAfterTool(state)).toHaveLength(1);
    expect(await childRuns(state)).toBe(1);
    expect(await readFile(join(folder, "logs", "run.log"), "utf8")).toMatch(/parked \(the gateway stops\)/);
    expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });
  });

  it("a kill -9 in the middle of a child's call: the next start ends it owner_restarted, reported; the call does not run again", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    state.fake.setDefault(model({ command: "echo ran >> child-runs.txt; sleep 5", hang: false }));
    const first = await state.startGateway();
    await say(first, "spawn please");
    const { id, folder } = await runFolderOf(first);
    await until("the child's bash call to write its line", async () => (await childRuns(state)) === 1);
    expect((await first.kill()).signal).toBe("SIGKILL");
    expect((await runJson(folder)).state).toEqual({ status: "running", reported: false });

    const second = await state.startGateway();
    const notice = await untilNotice(second, noticeOf(id, folder, "owner_restarted"));
    expect(notice).toContain("it could not go on afterwards (its last step was cut short)");
    await until("run.json marked reported", async () => (await runJson(folder)).state.reported);
    expect((await runJson(folder)).state).toEqual({ status: "owner_restarted", reported: true });
    await say(second, "still there?");
    expect(childAfterTool(state)).toHaveLength(0);
    expect(await childRuns(state)).toBe(1);
    expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });
  });

  describe("approvals in a child", () => {
    const risky = { inbound: { reply: { agent: { approvals: "risky" } } } };
    const prompt = (id: string) =>
      `Approval needed: sub-agent ${id}'s bash wants to run\necho ran >> child-runs.txt`;

    async function spawnAndWaitForPrompt(gw: GatewayProcess) {
      await say(gw, "spawn please");
      const run = await runFolderOf(gw);
      await until(
        "the child's prompt in the parent's chat",
        async () => (await gw.outbox()).some((o) => o.chatId === CHAT && o.text.startsWith(prompt(run.id))),
        async () => `outbox ${JSON.stringify(await gw.outbox())}\n${gw.stderr.tail()}`,
      );
      await until(
        "run.json waiting-approval",
        async () => (await runJson(run.folder)).state.status === "waiting-approval",
      );
      return run;
    }

    it.each([
      ["/approve", "ran once", "child saw: ", 1],
      ["/deny not now", "gets the denial", "child saw: Not run: this call was not approved (not now).", 0],
    ] as const)(
      "a child's risky bash asks in the parent's chat naming the child; %s: the call %s, the parent chats meanwhile",
      async (answer, _what, result, runs) => {
        const state = await E2eState.create({ allowFrom: ["alice"], config: risky });
        state.fake.setDefault(model({ hang: false, quote: true }));
        const gw = await state.startGateway();
        const { id, folder } = await spawnAndWaitForPrompt(gw);
        const status = await gw.call<{ approvals?: { what: string }[] }>("GET", "/api/status");
        expect(status.body.approvals?.map((a) => a.what)).toEqual([
          expect.stringContaining(`sub-agent ${id}'s bash`),
        ]);
        // The parent is not held by its child's approval.
        await say(gw, "how are you");
        expect((await gw.outbox()).map((o) => o.text)).toContain("echo: how are you");
        expect(await childRuns(state)).toBe(0);

        await say(gw, answer);
        const notice = await untilNotice(gw, noticeOf(id, folder, "done"));
        expect(notice.startsWith(`${noticeOf(id, folder, "done")}${result}`), notice).toBe(true);
        if (runs === 1) expect(notice).not.toContain("Not run");
        expect(await childRuns(state)).toBe(runs);
        await until("run.json marked reported", async () => (await runJson(folder)).state.reported);
        expect((await gw.call<{ approvals?: unknown[] }>("GET", "/api/status")).body.approvals ?? []).toEqual(
          [],
        );
        expect.soft(await gw.stop(), gw.stderr.tail()).toEqual({ code: 0, signal: null });
      },
    );

    it("on Telegram: the child's prompt reaches the parent's chat naming the child; /approve there runs it once", async () => {
      const { state, tg, config } = await telegramE2e();
      await state.writeConfig(config(risky));
      state.fake.setDefault(model({ hang: false, quote: true }));
      const gw = await state.startGateway();
      await tg.waitFor(() => tg.polling, "the first long poll");
      tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "spawn please" });
      await tg.waitFor(() => tg.textsTo(ALICE.id).length === 2, "the spawn's answer and the child's prompt");
      // The child runs beside the parent's turn: its prompt may come before or after the spawn's answer.
      const texts = tg.textsTo(ALICE.id);
      const spawned = texts.find((t) => t.startsWith("parent saw: Started sub-agent"));
      const id = /Started sub-agent (run-[0-9a-f]{8})/.exec(spawned ?? "")?.[1] ?? "none";
      expect(
        texts.filter((t) => t.startsWith(`${prompt(id)}\n`)),
        JSON.stringify(texts),
      ).toHaveLength(1);
      expect(await childRuns(state)).toBe(0);

      tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
      await tg.waitFor(() => tg.textsTo(ALICE.id).length === 4, "the approval's note and the child's notice");
      expect(tg.textsTo(ALICE.id)[2]).toBe("Approved: bash runs now.");
      expect(tg.textsTo(ALICE.id)[3]).toMatch(
        new RegExp(`^echo: \\[subagent-notice\\] \\[sub-agent ${id} done\\] .*\\nchild saw: `),
      );
      expect(await childRuns(state)).toBe(1);
      expect.soft(await gw.stop(), gw.stderr.tail()).toEqual({ code: 0, signal: null });
    });

    it("a child's prompt survives a restart: still listed, and the answer resumes the child once", async () => {
      const state = await E2eState.create({ allowFrom: ["alice"], config: risky });
      state.fake.setDefault(model({ hang: false, quote: true }));
      const first = await state.startGateway();
      const { id, folder } = await spawnAndWaitForPrompt(first);
      expect.soft(await first.stop(), first.stderr.tail()).toEqual({ code: 0, signal: null });
      expect((await runJson(folder)).state).toEqual({ status: "waiting-approval", reported: false });

      const second = await state.startGateway();
      const status = await second.call<{ approvals?: { what: string }[] }>("GET", "/api/status");
      expect(status.body.approvals?.map((a) => a.what)).toEqual([
        expect.stringContaining(`sub-agent ${id}'s bash`),
      ]);
      await say(second, "/approve");
      await untilNotice(second, `${noticeOf(id, folder, "done")}child saw: `);
      expect(await childRuns(state)).toBe(1);
      await say(second, "/approve");
      expect((await second.outbox()).at(-1)?.text).toBe(
        "Nothing in this session is waiting for an approval.",
      );
      expect(await childRuns(state)).toBe(1);
      expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });
    });
  });
});
