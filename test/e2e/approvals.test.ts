import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { notRunDenied } from "../../src/agent/turn-parked.js";
import { markerReply } from "../fakes/openai-server.js";
import { cleanupAll, E2eState } from "./harness.js";
import { ALICE, BOB, GROUP, privateChat, STRANGER, telegramE2e } from "./telegram-harness.js";

/**
 * Approvals in chat (docs/tools.md) through the real `clawdis gateway`, real grammY, the fake Bot API and a real
 * bash: a risky command waits for the person's answer and runs exactly once, across a kill -9 too; /deny reaches
 * the model; a stranger in the group and a webhook cannot answer.
 */
describe("e2e: approvals in chat", () => {
  afterEach(cleanupAll);

  /** The command the model asks for: each run adds a line to runs.txt in the workspace. */
  const COMMAND = "echo ran >> runs.txt";
  /** The group session's workspace: the `workspace/` of its session folder (docs/files.md). */
  const groupWorkspace = async (state: E2eState): Promise<string> => {
    const sessionId = (await state.readStore())[`group:${GROUP.id}`]?.sessionId;
    expect(sessionId, "the group's session id").toBeDefined();
    return join(state.storePath, "..", sessionId ?? "", "workspace");
  };
  const runsIn = async (dir: string): Promise<number> => {
    try {
      return (await readFile(join(dir, "runs.txt"), "utf8")).split("\n").filter(Boolean).length;
    } catch {
      return 0;
    }
  };

  async function setup(extra: Record<string, unknown> = {}, section: Record<string, unknown> = {}) {
    const e2e = await telegramE2e(section);
    await e2e.state.writeConfig(
      e2e.config({ inbound: { reply: { agent: { approvals: "risky" } } }, ...extra }),
    );
    e2e.state.fake.setDefault(markerReply);
    return e2e;
  }

  it("a risky bash waits for /approve, naming the command and its folder, and runs once", async () => {
    const { state, tg } = await setup();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `[[bash:${COMMAND}]]` });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the prompt");
    const workspace = join(state.dir, "workspace");
    expect(tg.textsTo(ALICE.id)[0]).toBe(
      `Approval needed: bash wants to run\n${COMMAND}\nin ${workspace}\nAnswer /approve, /approve always (this exact command runs without asking from now on) or /deny [reason].`,
    );
    expect(await runsIn(workspace)).toBe(0);
    const status = await gw.call<{ approvals?: { what: string }[] }>("GET", "/api/status");
    expect(status.body.approvals?.map((a) => a.what)).toEqual([
      `bash wants to run\n${COMMAND}\nin ${workspace}`,
    ]);

    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 3, "the approval's note and the reply");
    expect(tg.textsTo(ALICE.id).slice(1)).toEqual(["Approved: bash runs now.", `echo: [[bash:${COMMAND}]]`]);
    expect(await runsIn(workspace)).toBe(1);
    // A second answer finds nothing waiting.
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 4, "the answer to the second /approve");
    expect(tg.textsTo(ALICE.id)[3]).toBe("Nothing in this session is waiting for an approval.");
    expect(await runsIn(workspace)).toBe(1);
    await gw.stop();
  });

  it("/deny reaches the model as the call's result; the command never runs", async () => {
    const { state, tg } = await setup();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `[[bash:${COMMAND}]]` });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the prompt");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/deny not on this machine" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 3, "the denial's note and the reply");
    expect(tg.textsTo(ALICE.id)[1]).toBe("Denied: bash does not run.");
    const last = state.fake.requests.at(-1)?.body.messages ?? [];
    expect(last.find((m) => m.role === "tool")?.content).toBe(notRunDenied("not on this machine"));
    expect(await runsIn(join(state.dir, "workspace"))).toBe(0);
    await gw.stop();
  });

  it("kill -9 between the prompt and the answer: the prompt waits (clawdis status lists it); the answer runs it exactly once", async () => {
    const { state, tg } = await setup();
    const first = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `[[bash:${COMMAND}]]` });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the prompt");
    expect((await first.kill()).signal).toBe("SIGKILL");

    const second = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the second run polls");
    const human = await state.cli(["status"]);
    expect(human.stdout).toMatch(
      /waiting for approval:\n {2}main · .* · bash wants to run echo ran >> runs\.txt in /,
    );
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 3, "the approval's note and the reply");
    expect(await runsIn(join(state.dir, "workspace"))).toBe(1);
    await second.stop();

    // Nothing runs it again after another start.
    const third = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the third run polls");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "still there?" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 4, "the next answer");
    expect(await runsIn(join(state.dir, "workspace"))).toBe(1);
    expect(tg.textsTo(ALICE.id).filter((t) => t.startsWith("Approval needed"))).toHaveLength(1);
    await third.stop();
  });

  it("a session waiting on a prompt is unloaded when idle; the answer loads it again and runs the call once", async () => {
    const { state, tg } = await setup({
      inbound: { reply: { agent: { approvals: "risky" }, session: { passivateAfterMinutes: 0.02 } } },
    });
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const from = gw.stderr.length;
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `[[bash:${COMMAND}]]` });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the prompt");
    await gw.stderr.waitFor(
      /idle session unloaded from memory.*main|main.*idle session unloaded from memory/,
      {
        from,
      },
    );
    const workspace = join(state.dir, "workspace");
    expect(await runsIn(workspace)).toBe(0);
    const status = await gw.call<{ approvals?: { what: string }[] }>("GET", "/api/status");
    expect(status.body.approvals?.map((a) => a.what)).toEqual([
      `bash wants to run\n${COMMAND}\nin ${workspace}`,
    ]);
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 3, "the approval's note and the reply");
    expect(tg.textsTo(ALICE.id).slice(1)).toEqual(["Approved: bash runs now.", `echo: [[bash:${COMMAND}]]`]);
    expect(await runsIn(workspace)).toBe(1);
    await gw.stop();
  });

  it("in a group, a stranger's /approve is ignored; the person whose turn it is approves", async () => {
    const { state, tg } = await setup(
      { inbound: { reply: { agent: { approvals: "risky", tools: { groups: ["bash"] } } } } },
      { allowFrom: [ALICE.id, "@bob_b", GROUP.id] },
    );
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const mention = "@clawdis_test_bot ";
    const say = (from: typeof BOB, text: string) =>
      tg.pushMessage({
        chat: GROUP,
        from,
        text: `${mention}${text}`,
        entities: [{ type: "mention", offset: 0, length: mention.length - 1 }],
      });
    say(BOB, `[[bash:${COMMAND}]]`);
    await tg.waitFor(() => tg.textsTo(GROUP.id).length === 1, "the prompt in the group");
    say(STRANGER, "/approve");
    await gw.stderr.waitFor(/an approval answer from someone who may not give it: ignored/);
    expect(await runsIn(await groupWorkspace(state))).toBe(0);
    say(BOB, "/approve");
    await tg.waitFor(() => tg.textsTo(GROUP.id).length === 3, "the approval's note and the reply");
    expect(tg.textsTo(GROUP.id)[1]).toBe("Approved: bash runs now.");
    expect(await runsIn(await groupWorkspace(state))).toBe(1);
    await gw.stop();
  });

  it("a webhook that says /approve does not answer: it waits, and runs after the person's answer", async () => {
    const { state, tg } = await setup({ webhooks: { ci: { session: "main" } } });
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: `[[bash:${COMMAND}]]` });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the prompt");
    const hook = await gw.call("POST", "/hooks/ci", { text: "/approve" });
    expect(hook.status).toBe(202);
    await gw.stderr.waitFor(/message held until the approval that waits is answered/);
    expect(await runsIn(join(state.dir, "workspace"))).toBe(0);
    const before = state.fake.requests.length;
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 3, "the approval's note and the reply");
    await state.fake.waitForRequest(before + 2);
    expect(await runsIn(join(state.dir, "workspace"))).toBe(1);
    // The resumed turn first, then the webhook's own turn, which sees "/approve" as text.
    const webhookTurn = state.fake.requests[before + 1]?.body.messages.at(-1);
    expect(JSON.stringify(webhookTurn?.content)).toContain("/approve");
    await gw.stop();
  });

  it("the prompt's inline buttons: a stranger's press does nothing; the person's Approve runs it once and the buttons go", async () => {
    const { state, tg } = await setup(
      { inbound: { reply: { agent: { approvals: "risky", tools: { groups: ["bash"] } } } } },
      { allowFrom: [ALICE.id, "@bob_b", GROUP.id] },
    );
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const mention = "@clawdis_test_bot ";
    tg.pushMessage({
      chat: GROUP,
      from: BOB,
      text: `${mention}[[bash:${COMMAND}]]`,
      entities: [{ type: "mention", offset: 0, length: mention.length - 1 }],
    });
    await tg.waitFor(() => tg.textsTo(GROUP.id).length === 1, "the prompt in the group");
    const prompt = tg.sent.find((m) => m.chatId === String(GROUP.id));
    expect(prompt?.buttons).toEqual([
      { text: "Approve", data: "/approve" },
      { text: "Approve always", data: "/approve always" },
      { text: "Deny", data: "/deny" },
    ]);
    const messageId = prompt?.messageId ?? 0;
    // A stranger's press is answered (the spinner stops) and ignored; the buttons stay.
    tg.pushPress({ chat: GROUP, from: STRANGER, messageId, data: "/approve" });
    await gw.stderr.waitFor(/an approval answer from someone who may not give it: ignored/);
    expect(tg.callsOf("answerCallbackQuery")).toHaveLength(1);
    expect(await runsIn(await groupWorkspace(state))).toBe(0);
    expect(prompt?.buttons).toHaveLength(3);

    tg.pushPress({ chat: GROUP, from: BOB, messageId, data: "/approve" });
    await tg.waitFor(() => tg.textsTo(GROUP.id).length === 3, "the approval's note and the reply");
    expect(tg.callsOf("answerCallbackQuery")).toHaveLength(2);
    expect(tg.textsTo(GROUP.id)[1]).toBe("Approved: bash runs now.");
    expect(prompt?.buttons).toEqual([]);
    expect(await runsIn(await groupWorkspace(state))).toBe(1);
    await gw.stop();
  });

  it("the terminal chat prints the prompt; /approve typed at the next line runs the command once", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { agent: { approvals: "risky" } } } },
    });
    state.fake.setDefault(markerReply);
    const gw = await state.startGateway();
    const chat = state.spawn(["chat"]);
    chat.write(`[[bash:${COMMAND}]]`);
    await chat.stdout.waitFor(
      `Approval needed: bash wants to run\n${COMMAND}\nin ${join(state.dir, "workspace")}`,
    );
    await chat.stdout.waitFor("Answer /approve");
    expect(await runsIn(join(state.dir, "workspace"))).toBe(0);
    chat.write("/approve");
    await chat.stdout.waitFor(`echo: [[bash:${COMMAND}]]`);
    chat.write("/quit");
    expect((await chat.waitForExit()).code).toBe(0);
    expect(await runsIn(join(state.dir, "workspace"))).toBe(1);
    // The answer's line shows the note, then the resumed turn's reply, once each.
    const printed = chat.stdout.text();
    expect(printed.split("Approved: bash runs now.")).toHaveLength(2);
    expect(printed.split(`echo: [[bash:${COMMAND}]]`)).toHaveLength(2);
    await gw.stop();
  });

  it("the start log says once that tools run without asking when no policy is set, and not when one is", async () => {
    const state = await E2eState.create();
    const unset = await state.startGateway();
    await unset.stop();
    const said = unset.stderr
      .text()
      .split("tools run without asking: inbound.reply.agent.approvals is not set");
    expect(said).toHaveLength(2);
    await state.writeConfig(
      state.configFor({ config: { inbound: { reply: { agent: { approvals: "risky" } } } } }),
    );
    const set = await state.startGateway();
    await set.stop();
    expect(set.stderr.text()).not.toContain("tools run without asking");
  });
});
