import { describe, expect, it } from "vitest";
import { type SseEvent, sseEvents } from "./sse-events.js";

async function events(parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const part of parts) yield typeof part === "string" ? Buffer.from(part, "utf8") : part;
  }
  const out: SseEvent[] = [];
  for await (const event of sseEvents(body())) out.push(event);
  return out;
}

/** Every way of cutting `bytes` in two. */
function cuts(text: string): Uint8Array[][] {
  const bytes = Buffer.from(text, "utf8");
  return Array.from({ length: bytes.length + 1 }, (_, i) => [bytes.subarray(0, i), bytes.subarray(i)]);
}

describe("sseEvents", () => {
  it("yields each event's data, with \\n, \\r\\n or \\r line ends", async () => {
    for (const end of ["\n", "\r\n", "\r"]) {
      const stream = [`data: {"a":1}`, "", `data: [DONE]`, "", ""].join(end);
      expect(await events([stream])).toEqual([
        { event: null, data: '{"a":1}' },
        { event: null, data: "[DONE]" },
      ]);
    }
  });

  it("joins data lines with \\n, names events, skips comments and other fields, keeps spaces after the first", async () => {
    const stream = ": keep-alive\n\nevent: error\ndata:  two\ndata:one\nid: 7\nretry: 10\n\ndata\n\n";
    expect(await events([stream])).toEqual([
      { event: "error", data: " two\none" },
      { event: null, data: "" },
    ]);
  });

  it("gives the same events however the bytes are cut, inside a line end or a character", async () => {
    const stream = 'data: {"t":"héllo 👋"}\r\n\r\ndata: b\r\r';
    const whole = await events([stream]);
    expect(whole).toEqual([
      { event: null, data: '{"t":"héllo 👋"}' },
      { event: null, data: "b" },
    ]);
    for (const parts of cuts(stream)) expect(await events(parts)).toEqual(whole);
  });

  it("yields no event for what no empty line ended", async () => {
    expect(await events(["data: a\n\ndata: b\n"])).toEqual([{ event: null, data: "a" }]);
    expect(await events(["data: a\n\ndata: b"])).toEqual([{ event: null, data: "a" }]);
    expect(await events(["data: a\r"])).toEqual([]);
  });

  it("throws the body's error", async () => {
    async function* broken(): AsyncGenerator<Uint8Array> {
      yield Buffer.from("data: a\n\n");
      throw new Error("ECONNRESET");
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const event of sseEvents(broken())) seen.push(event.data);
      })(),
    ).rejects.toThrow("ECONNRESET");
    expect(seen).toEqual(["a"]);
  });
});
