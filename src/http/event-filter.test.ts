import { describe, expect, it } from "vitest";
import type { GatewayEvent } from "../plugin-api/types.js";
import { parseOutputFilter, passesFilter } from "./event-filter.js";

const base = { sessionKey: "main", turnId: "t" };
const events: Record<string, GatewayEvent> = {
  message: { type: "message", sessionKey: "main", role: "assistant", text: "hi", ts: 1 },
  delta: { type: "delta", ...base, text: "h" },
  thinking: { type: "thinking", ...base, text: "hmm" },
  toolCall: { type: "tool-call", ...base, callId: "c", name: "bash", arguments: "{}" },
  toolResult: { type: "tool-result", ...base, callId: "c", name: "bash", ok: true, output: "" },
  usage: { type: "usage", ...base, promptTokens: 1, completionTokens: 1, contextTokens: 1, estimated: false },
  file: { type: "file", ...base, path: "/x", kind: "document" },
  processing: { type: "processing", sessionKey: "main", state: "idle", ts: 1 },
  turnStart: { type: "turn-start", ...base, journalId: "j", channel: "c", chatId: "x", ts: 1 },
  turnEnd: { type: "turn-end", ...base, stopReason: "end", channel: "c", chatId: "x", ts: 1 },
  notice: { type: "notice", sessionKey: "main", text: "context compacted", ts: 1 },
};

describe("output filters", () => {
  it("parses a list, refuses unknown names, and treats empty as everything", () => {
    expect(parseOutputFilter(null)).toBeUndefined();
    expect(parseOutputFilter(" ")).toBeUndefined();
    expect([...(parseOutputFilter("toolCalls, text") as Set<string>)]).toEqual(["toolCalls", "text"]);
    expect(parseOutputFilter("text,tools")).toBe(
      'unknown filter "tools"; known: text, textStreaming, thinking, toolCalls, usage, files, processingState',
    );
  });

  it.each([
    ["toolCalls", ["toolCall", "toolResult", "turnStart", "turnEnd", "notice"]],
    ["text", ["message", "turnStart", "turnEnd", "notice"]],
    ["textStreaming", ["delta", "turnStart", "turnEnd", "notice"]],
    [
      "thinking,usage,files,processingState",
      ["thinking", "usage", "file", "processing", "turnStart", "turnEnd", "notice"],
    ],
  ])("filter %s lets through exactly %j (lifecycle always)", (filter, expected) => {
    const set = parseOutputFilter(filter) as Set<never>;
    const seen = Object.entries(events)
      .filter(([, event]) => passesFilter(event, set))
      .map(([name]) => name);
    expect(seen.sort()).toEqual([...expected].sort());
  });

  it("no filter: everything", () => {
    expect(Object.values(events).every((e) => passesFilter(e, undefined))).toBe(true);
  });
});
