import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { notRunDenied } from "../src/agent/turn-parked.js";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import { readTranscript } from "../src/sessions/transcript.js";
import type { MessageEntry } from "../src/sessions/types.js";
import { type FakeOpenAI, markerReply, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/** A `bash` that counts its runs and runs nothing. */
function countingBash() {
  const runs: string[] = [];
  const tool: ToolDefinition = {
    name: "bash",
    description: "run a command",
    parameters: { type: "object", properties: { command: { type: "string" } } },
    execute: async (args) => {
      runs.push(String(args.command));
      return { ok: true, output: "bash ran" };
    },
  };
  return { tool, runs };
}

type GatewayConfig = NonNullable<NonNullable<Parameters<typeof startTestGateway>[0]>["config"]>;

const risky: GatewayConfig = { inbound: { reply: { agent: { approvals: "risky" } } } };

describe("gateway: approvals in chat", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-approvals-gw-"));
    fake = await startFakeOpenAI();
    fake.setDefault(markerReply);
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  async function parked(
    bash: ReturnType<typeof countingBash>,
    config: GatewayConfig = risky,
    text = "[[bash:ls -la]]",
  ) {
    const gw = await startTestGateway({ stateDir, fake, tools: [bash.tool], config });
    const outcome = await done(await gw.chat.inject({ text }));
    expect(outcome.stopReason).toBe("waiting");
    await gw.chat.waitForSent(1);
    await gw.gateway.approvals.settled();
    return gw;
  }

  const prompt = (gw: TestGateway) => gw.chat.textsTo("c-alice")[0] ?? "";

  it("a risky bash waits: the prompt names the command and its folder; /approve runs it once; a second /approve is told nothing waits", async () => {
    const bash = countingBash();
    const gw = await parked(bash);
    expect(bash.runs).toEqual([]);
    expect(prompt(gw)).toContain("bash wants to run\nls -la\nin ");
    expect(prompt(gw)).toContain(join(stateDir, "workspace"));
    expect(prompt(gw)).toMatch(/\/approve.*\/deny/s);
    expect(gw.gateway.approvals.pending("main")).toHaveLength(1);
    expect(await gw.gateway.statusText("main")).toMatch(
      /Waiting for approval for .*bash wants to run ls -la/,
    );

    await done(await gw.chat.inject({ text: "/approve" }));
    await gw.chat.waitForSent(3);
    await gw.idle();
    expect(bash.runs).toEqual(["ls -la"]);
    expect(gw.chat.textsTo("c-alice").slice(1)).toEqual([
      "Approved: bash runs now.",
      "echo: [[bash:ls -la]]",
    ]);
    expect(gw.gateway.approvals.pending()).toEqual([]);

    const again = await done(await gw.chat.inject({ text: "/approve" }));
    expect(again.payloads.map((p) => p.text)).toEqual([
      "Nothing in this session is waiting for an approval.",
    ]);
    await gw.idle();
    expect(bash.runs).toEqual(["ls -la"]);
    expect(gw.gateway.journal.openCount()).toBe(0);
    await gw.close();
  });

  it("/deny with a reason: bash never runs, the model reads the reason", async () => {
    const bash = countingBash();
    const gw = await parked(bash);
    await done(await gw.chat.inject({ text: "/deny not on this machine" }));
    await gw.chat.waitForSent(3);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual([]);
    const last = fake.requests.at(-1)?.body.messages ?? [];
    expect(last.find((m) => m.role === "tool")?.content).toBe(notRunDenied("not on this machine"));
  });

  it("a new message from the person denies the call (you wrote instead) and joins the turn: one reply", async () => {
    const bash = countingBash();
    const gw = await parked(bash);
    await gw.chat.inject({ text: "never mind, just say hi" });
    await gw.chat.waitForSent(3);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual([]);
    const last = fake.requests.at(-1)?.body.messages ?? [];
    expect(last.find((m) => m.role === "tool")?.content).toBe(notRunDenied("you wrote instead"));
    expect(last.at(-1)).toMatchObject({ role: "user" });
    expect(JSON.stringify(last.at(-1)?.content)).toContain("never mind, just say hi");
    // The prompt, the note that the call was not run, and one reply.
    expect(gw.chat.textsTo("c-alice").slice(1)).toEqual([
      "Not run: you wrote instead.",
      "echo: [[bash:ls -la]] | never mind, just say hi",
    ]);
    expect(fake.requests).toHaveLength(2);
  });

  it("automated input never answers: a reminder that says /approve waits until the person answers", async () => {
    const bash = countingBash();
    const gw = await parked(bash);
    const reminder = await gw.gateway.submitInternal({
      sessionKey: "main",
      kind: "reminder",
      text: "/approve",
      authority: "automated",
    });
    expect(reminder.status).toBe("accepted");
    expect(bash.runs).toEqual([]);
    expect(gw.gateway.approvals.pending("main")).toHaveLength(1);
    await done(await gw.chat.inject({ text: "/approve" }));
    await done(reminder);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual(["ls -la"]);
  });

  it("an automated turn in a session the owner never wrote in asks in the owner's chat; the owner's /approve there runs it once", async () => {
    const bash = countingBash();
    const gw = await startTestGateway({ stateDir, fake, tools: [bash.tool], config: risky });
    // The owner talks in the primary session first: that chat is theirs.
    await done(await gw.chat.inject({ text: "hello" }));
    await gw.idle();
    const hook = await gw.gateway.submitInternal({
      sessionKey: "hooks:ci",
      kind: "reminder",
      text: "[[bash:make deploy]]",
      authority: "automated",
      allowedTools: ["bash"],
      route: { channel: "chat", chatId: "c-hooks", chatType: "direct" },
    });
    expect(hook.status).toBe("accepted");
    await gw.idle();
    await gw.gateway.approvals.settled();
    const [ask] = gw.gateway.approvals.pending("hooks:ci");
    expect(ask?.promptTo, "the prompt goes to the owner's chat").toMatchObject({ chatId: "c-alice" });
    expect(gw.chat.textsTo("c-alice").at(-1)).toContain("bash wants to run\nmake deploy");
    expect(bash.runs).toEqual([]);
    await done(await gw.chat.inject({ text: "/approve" }));
    // The note in the owner's chat, then the resumed automated turn's reply in its own chat.
    await gw.chat.waitForSent(4);
    await gw.idle();
    expect(gw.chat.textsTo("c-alice").at(-1)).toBe("Approved: bash runs now.");
    expect(gw.chat.textsTo("c-hooks")).toHaveLength(1);
    expect(bash.runs).toEqual(["make deploy"]);
    expect(gw.gateway.approvals.pending()).toEqual([]);
    await gw.close();
  });

  it("in a group, only the person whose turn it is (or the owner) answers; another member is ignored", async () => {
    const bash = countingBash();
    const gw = await startTestGateway({
      stateDir,
      fake,
      tools: [bash.tool],
      config: { inbound: { reply: { agent: { approvals: "risky", tools: { groups: ["bash"] } } } } },
      chat: (chat) => chat.allowed.add("carol"),
    });
    const group = { chatId: "g1", chatType: "group" as const, mentioned: true };
    const outcome = await done(await gw.chat.inject({ ...group, senderId: "bob", text: "[[bash:make]]" }));
    expect(outcome.stopReason).toBe("waiting");
    await gw.chat.waitForSent(1);
    await gw.gateway.approvals.settled();
    const r = await gw.chat.inject({ ...group, senderId: "carol", text: "/approve" });
    const stranger = await done(r);
    expect(stranger.stopReason).toBe("filtered");
    await gw.idle();
    expect(bash.runs).toEqual([]);
    expect(gw.gateway.approvals.pending()).toHaveLength(1);
    await done(await gw.chat.inject({ ...group, senderId: "bob", text: "/approve" }));
    await gw.chat.waitForSent(3);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual(["make"]);
    expect(gw.chat.textsTo("g1")).toHaveLength(3);
  });

  it("/approve always keeps the exact command in approvals.json: it runs without asking next time, another command asks", async () => {
    const bash = countingBash();
    const gw = await parked(bash, risky, "[[bash:git status]]");
    await done(await gw.chat.inject({ text: "/approve always" }));
    await gw.chat.waitForSent(3);
    await gw.idle();
    expect(JSON.parse(await readFile(join(stateDir, "approvals.json"), "utf8"))).toEqual({
      bash: ["git status"],
    });
    const next = await done(await gw.chat.inject({ text: "[[bash:git status]]" }));
    expect(next.stopReason).toBe("end");
    const other = await done(await gw.chat.inject({ text: "[[bash:git status; rm -rf ~]]" }));
    expect(other.stopReason).toBe("waiting");
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual(["git status", "git status"]);
  });

  it("a restart keeps the prompt (/status lists it); the answer then runs the call exactly once", async () => {
    const bash = countingBash();
    const first = await parked(bash);
    await first.close();
    const second = await startTestGateway({ stateDir, fake, tools: [bash.tool], config: risky });
    await second.idle();
    expect(second.gateway.approvals.pending("main")).toHaveLength(1);
    expect(await second.gateway.statusText("main")).toMatch(/Waiting for approval/);
    await done(await second.chat.inject({ text: "/approve", messageId: "after-restart" }));
    await second.chat.waitForSent(2);
    await second.idle();
    expect(bash.runs).toEqual(["ls -la"]);
    expect(second.gateway.journal.openCount()).toBe(0);
    await second.close();
  });

  it("no policy: bash runs without asking (today's behaviour)", async () => {
    const bash = countingBash();
    const gw = await startTestGateway({ stateDir, fake, tools: [bash.tool] });
    const outcome = await done(await gw.chat.inject({ text: "[[bash:ls]]" }));
    await gw.close();
    expect(outcome.stopReason).toBe("end");
    expect(bash.runs).toEqual(["ls"]);
  });

  it("a policy that denies: the model reads why, the tool does not run", async () => {
    const bash = countingBash();
    const gw = await startTestGateway({
      stateDir,
      fake,
      tools: [bash.tool],
      config: { inbound: { reply: { agent: { approvals: { bash: "deny" } } } } },
    });
    const outcome = await done(await gw.chat.inject({ text: "[[bash:ls]]" }));
    await gw.close();
    expect(outcome.stopReason).toBe("end");
    expect(bash.runs).toEqual([]);
    const last = fake.requests.at(-1)?.body.messages ?? [];
    expect(last.find((m) => m.role === "tool")?.content).toMatch(/approvals policy .* does not allow bash/);
  });

  it("an approval whose batch was resumed but whose decision was never recorded (a kill between the two) is closed by the session's next turn", async () => {
    const bash = countingBash();
    const gw = await parked(bash);
    const [ask] = gw.gateway.approvals.pending("main");
    expect(ask, "the waiting approval").toBeDefined();
    // The answer's own journaled input, as its replay after such a kill runs it: no approval-decided is written.
    const resumed = await gw.gateway.resumeParked("main", { [ask?.callId ?? ""]: { run: true } });
    await done(resumed);
    await gw.idle();
    await gw.gateway.approvals.settled();
    expect(bash.runs).toEqual(["ls -la"]);
    expect(gw.gateway.approvals.pending("main")).toEqual([]);
    expect(
      gw.logs.some((l) => /approval closed: its batch was resumed before a restart/.test(l.message)),
    ).toBe(true);
    await gw.close();
  });

  it("a session waiting on a prompt passivates; the answer loads it again and runs the call once", async () => {
    const bash = countingBash();
    const gw = await parked(bash, {
      inbound: { reply: { agent: { approvals: "risky" }, session: { passivateAfterMinutes: 1 } } },
    });
    await gw.idle();
    for (const ms of [60_000, 5_000]) {
      gw.clock.advance(ms);
      await gw.gateway.sessions.settled();
    }
    expect(gw.gateway.sessions.peek("main")).toBeUndefined();
    expect(gw.gateway.approvals.pending("main")).toHaveLength(1);
    await done(await gw.chat.inject({ text: "/approve" }));
    await gw.chat.waitForSent(3);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual(["ls -la"]);
    expect(gw.chat.textsTo("c-alice").at(-1)).toBe("echo: [[bash:ls -la]]");
  });

  it("in a group, an answer that does not mention the bot still answers; other chatter waits, then is kept as context", async () => {
    const bash = countingBash();
    const gw = await startTestGateway({
      stateDir,
      fake,
      tools: [bash.tool],
      config: { inbound: { reply: { agent: { approvals: "risky", tools: { groups: ["bash"] } } } } },
    });
    const group = { chatId: "g1", chatType: "group" as const };
    await done(await gw.chat.inject({ ...group, mentioned: true, senderId: "bob", text: "[[bash:make]]" }));
    await gw.chat.waitForSent(1);
    await gw.gateway.approvals.settled();
    const chatter = await gw.chat.inject({ ...group, senderId: "alice", text: "lunch at noon?" });
    await done(await gw.chat.inject({ ...group, senderId: "bob", text: "/approve" }));
    expect((await done(chatter)).stopReason).toBe("filtered");
    await gw.chat.waitForSent(3);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual(["make"]);
    // The chatter came after the resumed turn: kept as context behind its reply, not between the call and its result.
    const entry = await gw.gateway.store.get("group:g1");
    const read = await readTranscript(gw.gateway.store.transcriptPath(entry?.sessionId ?? ""));
    const kinds = read.entries.flatMap((e) =>
      e.type === "message"
        ? [(e as MessageEntry).message.role]
        : e.type === "group-context"
          ? ["context"]
          : [],
    );
    expect(kinds).toEqual(["user", "assistant", "tool", "assistant", "context"]);
  });

  it("/approve always with a prefix pattern keeps the pattern; one that does not match the command decides nothing", async () => {
    const bash = countingBash();
    const gw = await parked(bash, risky, "[[bash:git status]]");
    const typo = await done(await gw.chat.inject({ text: "/approve always git stauts*" }));
    expect(typo.payloads.map((p) => p.text)).toEqual([
      '"git stauts*" does not match the command that waits, so nothing is decided yet. Answer /approve, /approve always, /approve always <a prefix of it>* or /deny [reason].',
    ]);
    expect(bash.runs).toEqual([]);
    expect(gw.gateway.approvals.pending("main")).toHaveLength(1);
    await done(await gw.chat.inject({ text: "/approve always git status*" }));
    await gw.idle();
    expect(JSON.parse(await readFile(join(stateDir, "approvals.json"), "utf8"))).toEqual({
      bash: ["git status*"],
    });
    expect((await done(await gw.chat.inject({ text: "[[bash:git status --short]]" }))).stopReason).toBe(
      "end",
    );
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual(["git status", "git status --short"]);
  });

  it("after /deny a late /approve finds nothing waiting: the call never runs", async () => {
    const bash = countingBash();
    const gw = await parked(bash);
    await done(await gw.chat.inject({ text: "/deny no" }));
    const late = await done(await gw.chat.inject({ text: "/approve" }));
    expect(late.payloads.map((p) => p.text)).toEqual(["Nothing in this session is waiting for an approval."]);
    await gw.idle();
    await gw.close();
    expect(bash.runs).toEqual([]);
  });
});
