import { describe, expect, it } from "vitest";
import { readSse, type SseEvent, SseParser } from "./sse-parse.js";

function parseChunks(chunks: string[]): SseEvent[] {
  const parser = new SseParser();
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return [...events, ...parser.end()];
}

describe("SseParser", () => {
  it.each<[string, string[], SseEvent[]]>([
    [
      "one named event",
      ['event: delta\ndata: {"text":"hi"}\n\n'],
      [{ event: "delta", data: '{"text":"hi"}' }],
    ],
    ["default event name", ["data: x\n\n"], [{ event: "message", data: "x" }]],
    ["multi-line data", ["data: a\ndata: b\n\n"], [{ event: "message", data: "a\nb" }]],
    ["only one leading space is dropped", ["data:  two\n\n"], [{ event: "message", data: " two" }]],
    ["no space after colon", ["data:x\n\n"], [{ event: "message", data: "x" }]],
    ["field without colon means empty value", ["data\n\n"], [{ event: "message", data: "" }]],
    [
      "comments are skipped",
      [": connected\n\n: keep-alive\n\ndata: x\n\n"],
      [{ event: "message", data: "x" }],
    ],
    ["event without data is not dispatched", ["event: ping\n\n"], []],
    ["CRLF line ends", ["event: a\r\ndata: 1\r\n\r\n"], [{ event: "a", data: "1" }]],
    ["CR line ends", ["event: a\rdata: 1\r\r"], [{ event: "a", data: "1" }]],
    ["CRLF split across chunks", ["data: 1\r", "\n\r", "\n"], [{ event: "message", data: "1" }]],
    [
      "line split across chunks",
      ["ev", "ent: del", "ta\nda", "ta: x\n", "\n"],
      [{ event: "delta", data: "x" }],
    ],
    ["BOM at the start is skipped", ["\uFEFFdata: x\n\n"], [{ event: "message", data: "x" }]],
    ["id is kept", ["id: 7\ndata: x\n\n"], [{ event: "message", data: "x", id: "7" }]],
    [
      "retry and unknown fields are ignored",
      ["retry: 10\nfoo: bar\ndata: x\n\n"],
      [{ event: "message", data: "x" }],
    ],
    [
      "event name resets after dispatch",
      ["event: a\ndata: 1\n\ndata: 2\n\n"],
      [
        { event: "a", data: "1" },
        { event: "message", data: "2" },
      ],
    ],
    ["unterminated last event is dropped", ["data: 1\n\ndata: 2\n"], [{ event: "message", data: "1" }]],
    ["trailing CR completes the blank line at end", ["data: 1\n\r"], [{ event: "message", data: "1" }]],
  ])("%s", (_name, chunks, expected) => {
    expect(parseChunks(chunks)).toEqual(expected);
  });
});

describe("readSse", () => {
  it("decodes UTF-8 split across chunks", async () => {
    const bytes = new TextEncoder().encode('event: delta\ndata: {"text":"héllo ✓"}\n\n');
    const split = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes.slice(0, split));
        controller.enqueue(bytes.slice(split));
        controller.close();
      },
    });
    const events: SseEvent[] = [];
    for await (const event of readSse(body)) events.push(event);
    expect(events).toEqual([{ event: "delta", data: '{"text":"héllo ✓"}' }]);
  });
});
