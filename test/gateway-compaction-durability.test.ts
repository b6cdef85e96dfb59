import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolDefinition } from "../src/plugin-api/types.js";
import { type FakeOpenAI, type FakeReply, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway } from "./helpers/gateway-harness.js";

/**
 * A compaction in the middle of a turn, seen from what survives: its entry is durable before the compacted call
 * goes out (in a hot session, inside a journal `reply` record: a power cut after that keeps it, and a start puts it
 * back, test/gateway-reply-durability.test.ts), and it carries the loop guard's state, so a turn that runs again
 * after a restart goes on counting refusals where it was.
 */

interface JournalLine {
  op: string;
  entries?: { type: string; id: string; loopGuard?: { refused?: number } }[];
}

function journalLines(stateDir: string): JournalLine[] {
  return readFileSync(join(stateDir, "journal", "inbound.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as JournalLine);
}

async function transcriptLines(stateDir: string): Promise<Record<string, unknown>[]> {
  const store = JSON.parse(await readFile(join(stateDir, "sessions", "sessions.json"), "utf8")) as {
    main: { sessionId: string };
  };
  const text = await readFile(join(stateDir, "sessions", `${store.main.sessionId}.jsonl`), "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A tool that always answers the same: the loop guard refuses its third identical call. */
function probeTool() {
  const calls: unknown[] = [];
  const tool: ToolDefinition = {
    name: "probe",
    description: "test tool probe",
    parameters: { type: "object", properties: {} },
    async execute(args) {
      calls.push(args);
      return { ok: true, output: "status: pending" };
    },
  };
  return { tool, calls };
}

/** A 2000-token window, compaction past 1500, the newest 2 messages kept. */
const small = {
  inbound: {
    reply: {
      agent: { contextTokens: 2000, compactionModel: "notes-model" },
      session: { compaction: { keepRecentMessages: 2 } },
    },
  },
};

const probe: FakeReply = { toolCalls: [{ name: "probe", arguments: {} }] };
/** A probe call whose request was over the threshold: the next call of the turn is compacted first. */
const bigProbe: FakeReply = {
  toolCalls: [{ name: "probe", arguments: {} }],
  usage: { prompt_tokens: 1600, completion_tokens: 5, total_tokens: 1605 },
};

describe("gateway: a compaction in the middle of a turn", () => {
  let stateDir: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-compaction-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it("is in a journal reply record on disk before the compacted call is sent (a hot session)", async () => {
    const t = await startTestGateway({ stateDir, fake, config: small, tools: [probeTool().tool] });
    // The first reply fsyncs the transcript: from then on (the clock stands still) the session is hot.
    await done(await t.chat.inject({ text: "hello" }));
    fake.enqueue(probe, bigProbe, { text: "The job is pending." }, { hang: "before-headers" });
    const running = await t.chat.inject({ text: "is the job done?" });
    // Requests: hello, probe, bigProbe, the notes call, then the compacted call (held).
    await fake.waitForRequest(5);
    expect(fake.requests[3]?.body.model).toBe("notes-model");
    const compaction = (await transcriptLines(stateDir)).find((e) => e.type === "compaction");
    expect(compaction).toBeDefined();
    const held = journalLines(stateDir)
      .filter((l) => l.op === "reply")
      .flatMap((l) => l.entries ?? [])
      .map((e) => e.id);
    expect(held).toContain(compaction?.id);
    fake.release();
    await done(running);
    await t.close();
  });

  it("carries the loop guard's state: the turn run again after a restart goes on refusing the repeated call", async () => {
    const first = probeTool();
    const one = await startTestGateway({ stateDir, fake, config: small, tools: [first.tool] });
    await done(await one.chat.inject({ text: "hello" }));
    // Two runs of the same call, the third refused (with the request over the threshold), then compaction and the
    // compacted call, held while the gateway stops: the turn stays open in the journal for the next start.
    fake.enqueue(probe, probe, bigProbe, { text: "The job is pending." }, { hang: "before-headers" });
    const running = await one.chat.inject({ text: "is the job done?", messageId: "job" });
    await fake.waitForRequest(6);
    expect(first.calls).toHaveLength(2);
    const compaction = (await transcriptLines(stateDir)).find((e) => e.type === "compaction") as
      | { loopGuard?: { refused?: number } }
      | undefined;
    expect(compaction?.loopGuard?.refused).toBe(1);
    await one.close();
    expect((await done(running)).stopReason).toBe("aborted");

    const second = probeTool();
    fake.enqueue(probe, { text: "Still pending; I will stop checking." });
    const two = await startTestGateway({ stateDir, fake, config: small, tools: [second.tool] });
    await two.chat.waitForSent(1);
    await two.close();
    // A fresh guard would have run the call again; the restored one refuses it (the second refusal).
    expect(second.calls).toHaveLength(0);
    const refusal = (fake.requests[7]?.body.messages ?? []).filter((m) => m.role === "tool").at(-1);
    expect(String(refusal?.content)).toContain("try something different");
    expect(two.chat.textsTo("c-alice")).toEqual(["Still pending; I will stop checking."]);
  });
});
