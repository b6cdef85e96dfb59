import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnHooks } from "../src/agent/turn-hooks.js";
import { notRunDenied } from "../src/agent/turn-parked.js";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import { readTranscript } from "../src/sessions/transcript.js";
import type { ToolParkedEntry } from "../src/sessions/types.js";
import { type FakeOpenAI, markerReply, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

/** A gate that asks before every `bash` call (installed for tests only). */
const askOnBash: TurnHooks = {
  beforeTool: (call) =>
    call.function.name === "bash" ? { action: "ask", reason: "bash needs approval" } : { action: "run" },
};

/** The prompt the approvals send for a call this gate parks (its reason is the gate's). */
const PROMPT =
  "Approval needed: bash needs approval\nAnswer /approve, /approve always (this exact command runs without asking from now on) or /deny [reason].";

/** A `bash` that counts its runs and runs nothing. */
function countingBash() {
  const runs: unknown[] = [];
  const tool: ToolDefinition = {
    name: "bash",
    description: "run a command",
    parameters: { type: "object", properties: { command: { type: "string" } } },
    execute: async (args) => {
      runs.push(args);
      return { ok: true, output: "bash ran" };
    },
  };
  return { tool, runs };
}

/** The `tool-parked` entries of the main session's transcript. */
async function parkedEntries(gw: TestGateway): Promise<ToolParkedEntry[]> {
  const entry = await gw.gateway.store.get("main");
  if (!entry) return [];
  const read = await readTranscript(gw.gateway.store.transcriptPath(entry.sessionId));
  return read.entries.filter((e): e is ToolParkedEntry => e.type === "tool-parked");
}

describe("gateway: a tool gate that asks parks the turn; an answer resumes it", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-gate-"));
    fake = await startFakeOpenAI();
    // `[[bash:CMD]]` asks for one bash call; every other request is answered `echo: …`.
    fake.setDefault(markerReply);
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  async function parkedTurn(bash: ReturnType<typeof countingBash>) {
    const gw = await startTestGateway({ stateDir, fake, tools: [bash.tool], turnHooks: askOnBash });
    const outcome = await done(await gw.chat.inject({ text: "[[bash:ls]]" }));
    return { gw, outcome };
  }

  it("parks: no reply, the record stays open, the session is ready, the tool did not run", async () => {
    const bash = countingBash();
    const { gw, outcome } = await parkedTurn(bash);
    expect(fake.requests[0]?.body.tools?.map((t) => t.function.name)).toEqual([
      "bash",
      "job_status",
      "job_output",
      "job_kill",
      "remind",
      "spawn_agent",
      "check_agent_run",
    ]);
    expect(outcome.stopReason).toBe("waiting");
    await gw.idle();
    expect(gw.gateway.journal.openCount()).toBe(1);
    expect(gw.gateway.sessions.phaseOf("main")).toBe("ready");
    expect(bash.runs).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    const parked = await parkedEntries(gw);
    expect(parked).toHaveLength(1);
    expect(parked[0]).toMatchObject({ reason: "bash needs approval", journalId: expect.any(String) });
    await gw.close();
    // Only the prompt: the gate's reason, and how to answer.
    expect(gw.chat.textsTo("c-alice")).toEqual([PROMPT]);
  });

  it("an answer that approves runs the call once and delivers the reply once; both records end", async () => {
    const bash = countingBash();
    const { gw } = await parkedTurn(bash);
    const [parked] = await parkedEntries(gw);
    const callId = parked?.callIds[0] ?? "";
    const outcome = await done(await gw.gateway.resumeParked("main", { [callId]: { run: true } }));
    expect(outcome.stopReason).toBe("end");
    await gw.chat.waitForSent(2);
    await gw.idle();
    expect(bash.runs).toHaveLength(1);
    expect(gw.gateway.journal.openCount()).toBe(0);
    await gw.close();
    expect(gw.chat.textsTo("c-alice")).toEqual([PROMPT, "echo: [[bash:ls]]"]);
    expect(fake.requests).toHaveLength(2);
  });

  it("an answer that refuses: the call does not run, the model reads why", async () => {
    const bash = countingBash();
    const { gw } = await parkedTurn(bash);
    const [parked] = await parkedEntries(gw);
    const callId = parked?.callIds[0] ?? "";
    await done(await gw.gateway.resumeParked("main", { [callId]: { run: false, reason: "not today" } }));
    await gw.chat.waitForSent(2);
    await gw.close();
    expect(bash.runs).toEqual([]);
    const last = fake.requests.at(-1)?.body.messages ?? [];
    expect(last.find((m) => m.role === "tool" && m.tool_call_id === callId)?.content).toBe(
      notRunDenied("not today"),
    );
    expect(gw.chat.textsTo("c-alice")).toHaveLength(2);
  });

  it("a restart between park and answer parks it again (no model call, no tool run); the answer then runs it once", async () => {
    const bash = countingBash();
    const { gw: first } = await parkedTurn(bash);
    const [parked] = await parkedEntries(first);
    const callId = parked?.callIds[0] ?? "";
    await first.close();

    const second = await startTestGateway({ stateDir, fake, tools: [bash.tool], turnHooks: askOnBash });
    await second.idle();
    expect(second.gateway.journal.openCount()).toBe(1);
    expect(fake.requests).toHaveLength(1);
    expect(bash.runs).toEqual([]);
    const outcome = await done(await second.gateway.resumeParked("main", { [callId]: { run: true } }));
    expect(outcome.stopReason).toBe("end");
    await second.chat.waitForSent(1);
    await second.idle();
    expect(second.gateway.journal.openCount()).toBe(0);
    await second.close();
    expect(bash.runs).toHaveLength(1);
    expect(second.chat.textsTo("c-alice")).toEqual(["echo: [[bash:ls]]"]);
    expect(first.chat.textsTo("c-alice")).toEqual([PROMPT]);
    expect(fake.requests).toHaveLength(2);
  });

  it("a stop between the answer's tool run and its reply: after the restart the call is not run again, one reply", async () => {
    const bash = countingBash();
    const { gw: first } = await parkedTurn(bash);
    const [parked] = await parkedEntries(first);
    const callId = parked?.callIds[0] ?? "";
    // The model call after the approved run hangs until the stop.
    fake.enqueue({ hang: "before-headers" });
    const running = await first.gateway.resumeParked("main", { [callId]: { run: true } });
    await fake.waitForRequest(2);
    await first.close();
    await done(running);
    expect(bash.runs).toHaveLength(1);
    expect(first.gateway.journal.openCount()).toBe(2);

    const second = await startTestGateway({ stateDir, fake, tools: [bash.tool], turnHooks: askOnBash });
    await second.chat.waitForSent(1);
    await second.idle();
    expect(second.gateway.journal.openCount()).toBe(0);
    await second.close();
    expect(bash.runs).toHaveLength(1);
    expect(second.chat.textsTo("c-alice")).toEqual(["echo: [[bash:ls]]"]);
    expect(fake.requests).toHaveLength(3);
  });

  it("an answer with nothing parked is told so", async () => {
    const gw = await startTestGateway({ stateDir, fake, turnHooks: askOnBash });
    await done(await gw.chat.inject({ text: "hello" }));
    const outcome = await done(await gw.gateway.resumeParked("main", { call_x: { run: true } }));
    await gw.close();
    expect(outcome.payloads.map((p) => p.text)).toEqual([
      "Nothing in this session is waiting for an approval.",
    ]);
    expect(fake.requests).toHaveLength(1);
  });
});
