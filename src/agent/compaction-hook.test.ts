import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import type { CompactionEntry, StoredChatMessage, TranscriptEntry } from "../sessions/types.js";
import { compactionHook } from "./compaction-hook.js";
import type { LlmStreamRequest } from "./llm-client.js";
import { LOOP_GUARD_VERSION, type LoopGuardState } from "./loop-guard.js";

/**
 * The compaction hook's own contract (the whole flow through a gateway is in test/turn-safety.test.ts and
 * test/gateway-compaction-durability.test.ts): the entry it appends carries the loop guard's state as given, and
 * is appended as a `final` write (made durable before the compacted call goes out), before the person is told.
 */

const settings = {
  budget: { window: 1000, threshold: 0.5, keepRecentToolResults: 3, keepRecentMessages: 2 },
  notesModels: ["notes-model"],
  sidecarSeconds: 60,
};

/** A long conversation: well over the threshold, with old messages to drop. */
function conversation(): StoredChatMessage[] {
  const said: StoredChatMessage[] = [{ role: "system", content: "be brief" }];
  for (let i = 0; i < 6; i++) {
    said.push({ role: "user", content: `question ${i} ${"x".repeat(400)}` });
    said.push({ role: "assistant", content: `answer ${i}` });
  }
  return said;
}

/** A guard state no fresh guard has (a refusal and a failure score), so a dropped or replaced one shows. */
const guard: LoopGuardState = {
  v: LOOP_GUARD_VERSION,
  calls: { "probe:abc": { outcome: "h1", equal: 2 } },
  refused: 3,
  failScore: 5,
  causes: { "fetch_url: connection refused": 2 },
  nudged: 4,
};

function harness() {
  const log: string[] = [];
  const appended: { entries: TranscriptEntry[]; options: { final?: boolean } | undefined }[] = [];
  const hook = compactionHook(
    {
      llm: {
        stream: async (request: LlmStreamRequest) => {
          log.push(`notes call ${request.model}`);
          return {
            ok: true,
            text: "the person asked six questions",
            toolCalls: [],
            finishReason: "stop",
            model: request.model,
          };
        },
      },
      clock: new ManualClock(Date.parse("2026-01-01T00:00:00.000Z")),
      signal: new AbortController().signal,
      append: async (entries, options) => {
        log.push(`append ${entries.map((e) => e.type).join(",")} final=${options?.final === true}`);
        appended.push({ entries, options });
      },
      notify: async (text) => {
        log.push(`notify ${text}`);
      },
      sessionKey: "main",
      meta: { journalId: "j-1" },
    },
    settings,
    {
      guardState: () => guard,
      compacted: (tokensAfter) => log.push(`compacted ${tokensAfter}`),
    },
  );
  return { hook, log, appended };
}

describe("compactionHook", () => {
  it("appends one compaction entry carrying the loop guard's state and the turn's journal id", async () => {
    const { hook, appended } = harness();
    const messages = conversation();
    const next = await hook.prepareCall?.({ messages, inputTokens: 900, round: 3 });
    expect(next).toBeDefined();
    expect(appended).toHaveLength(1);
    const entry = appended[0]!.entries[0] as CompactionEntry & Record<string, unknown>;
    expect(entry.type).toBe("compaction");
    // The resumed turn (restore-guard.ts) goes on from exactly this state.
    expect(entry.loopGuard).toEqual(guard);
    expect(entry.journalId).toBe("j-1");
    expect(entry.notes).toBe("the person asked six questions");
    expect(entry.notesBy).toBe("notes-model");
  });

  it("appends the entry as a final write, before the person is told and before the compacted messages are used", async () => {
    const { hook, log, appended } = harness();
    await hook.prepareCall?.({ messages: conversation(), inputTokens: 900, round: 3 });
    expect(appended[0]!.options).toEqual({ final: true });
    expect(log.map((l) => l.split(" ")[0])).toEqual(["notes", "append", "compacted", "notify"]);
  });

  it("under the threshold: nothing appended, the messages go as they are", async () => {
    const { hook, log } = harness();
    expect(
      await hook.prepareCall?.({ messages: conversation(), inputTokens: 500, round: 1 }),
    ).toBeUndefined();
    expect(log).toEqual([]);
  });
});
