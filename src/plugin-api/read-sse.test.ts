import { describe, expect, it } from "vitest";
import { readSse, type SseEvent } from "./sse-parse.js";

function body(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

/** The same chunks as an async iterable of bytes (a `node:http` response's way). */
async function* iterated(chunks: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  for (const chunk of chunks) yield typeof chunk === "string" ? encoder.encode(chunk) : chunk;
}

/** The events of `chunks` as a web stream, after checking that the same bytes iterated give the same. */
async function read(chunks: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(body(chunks))) events.push(event);
  const fromIterable: SseEvent[] = [];
  for await (const event of readSse(iterated(chunks))) fromIterable.push(event);
  expect(fromIterable).toEqual(events);
  return events;
}

describe("readSse: a whole response body", () => {
  it.each<[string, string[], SseEvent[]]>([
    [
      "one named event",
      ['event: delta\ndata: {"text":"hi"}\n\n'],
      [{ event: "delta", data: '{"text":"hi"}' }],
    ],
    ["default event name", ["data: x\n\n"], [{ event: "message", data: "x" }]],
    ["multi-line data", ["data: a\ndata: b\n\n"], [{ event: "message", data: "a\nb" }]],
    ["only one leading space is dropped", ["data:  two\n\n"], [{ event: "message", data: " two" }]],
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
    [
      "event name resets after dispatch",
      ["event: a\ndata: 1\n\ndata: 2\n\n"],
      [
        { event: "a", data: "1" },
        { event: "message", data: "2" },
      ],
    ],
    ["unterminated last event is dropped", ["data: 1\n\ndata: 2\n"], [{ event: "message", data: "1" }]],
    ["a CR at the very end ends the line", ["data: 1\n\r"], [{ event: "message", data: "1" }]],
  ])("%s", async (_name, chunks, expected) => {
    expect(await read(chunks)).toEqual(expected);
  });

  it("decodes UTF-8 split across chunks", async () => {
    const bytes = new TextEncoder().encode('event: delta\ndata: {"text":"héllo ✓"}\n\n');
    const split = bytes.indexOf(0xc3) + 1;
    expect(await read([bytes.slice(0, split), bytes.slice(split)])).toEqual([
      { event: "delta", data: '{"text":"héllo ✓"}' },
    ]);
  });

  it("rejects when the body breaks", async () => {
    let pulls = 0;
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        if (pulls === 1) controller.enqueue(new TextEncoder().encode("data: 1\n\n"));
        else controller.error(new TypeError("terminated"));
      },
    });
    const seen: SseEvent[] = [];
    await expect(async () => {
      for await (const event of readSse(broken)) seen.push(event);
    }).rejects.toThrow("terminated");
    expect(seen).toEqual([{ event: "message", data: "1" }]);
  });

  it("stopping early cancels a web stream (which closes its connection)", async () => {
    let cancelled: unknown = "not cancelled";
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode("data: again\n\n"));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    for await (const event of readSse(endless)) {
      expect(event.data).toBe("again");
      break;
    }
    expect(cancelled).toBeUndefined();
  });

  it("an iterated body: its error rejects, and stopping early ends its iteration", async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield new TextEncoder().encode("data: 1\n\n");
      throw Object.assign(new Error("aborted"), { code: "ECONNRESET" });
    }
    const seen: SseEvent[] = [];
    await expect(async () => {
      for await (const event of readSse(broken())) seen.push(event);
    }).rejects.toThrow("aborted");
    expect(seen).toEqual([{ event: "message", data: "1" }]);
    let ended = false;
    async function* endless(): AsyncGenerator<Uint8Array> {
      try {
        for (;;) yield new TextEncoder().encode("data: again\n\n");
      } finally {
        ended = true;
      }
    }
    for await (const event of readSse(endless())) {
      expect(event.data).toBe("again");
      break;
    }
    expect(ended).toBe(true);
  });
});
