import { describe, expect, it } from "vitest";
import { readSse, type SseBody, type SseEvent } from "./sse-events.js";

const bytes = (part: string | Uint8Array) => (typeof part === "string" ? Buffer.from(part, "utf8") : part);

/** A body of `parts` that is only iterable (a web stream's way). */
function iterated(parts: (string | Uint8Array)[]): SseBody {
  return {
    async *[Symbol.asyncIterator]() {
      for (const part of parts) yield bytes(part);
    },
  };
}

/** A body of `parts` that pushes them (createHttpFetch's way); iterating it fails the test. */
function pushedBody(parts: (string | Uint8Array)[]): SseBody & { given: number } {
  const body = {
    given: 0,
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      throw new Error("a body that pushes its bytes was iterated");
    },
    async each(onChunk: (chunk: Uint8Array) => boolean | undefined) {
      for (const part of parts) {
        body.given++;
        if (onChunk(bytes(part)) === false) return;
      }
    },
  };
  return body;
}

/** The events of `parts`, read from a pushing body, after checking an iterated one gives the same. */
async function events(parts: (string | Uint8Array)[]): Promise<SseEvent[]> {
  const pushed: SseEvent[] = [];
  await readSse(pushedBody(parts), (event) => {
    pushed.push(event);
    return undefined;
  });
  const iteratedOut: SseEvent[] = [];
  await readSse(iterated(parts), (event) => {
    iteratedOut.push(event);
    return undefined;
  });
  expect(iteratedOut).toEqual(pushed);
  return pushed;
}

/** Every way of cutting `bytes` in two. */
function cuts(text: string): Uint8Array[][] {
  const bytes = Buffer.from(text, "utf8");
  return Array.from({ length: bytes.length + 1 }, (_, i) => [bytes.subarray(0, i), bytes.subarray(i)]);
}

describe("readSse", () => {
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
      readSse({ [Symbol.asyncIterator]: broken }, (event) => {
        seen.push(event.data);
        return undefined;
      }),
    ).rejects.toThrow("ECONNRESET");
    expect(seen).toEqual(["a"]);
  });

  it("stops at false: no further event, and the body is not read on", async () => {
    for (const stopAt of [1, 2]) {
      const body = pushedBody(["data: a\n\ndata: b\n\n", "data: c\n\n", "data: d\n\n"]);
      const seen: string[] = [];
      await readSse(body, (event) => {
        seen.push(event.data);
        return seen.length === stopAt ? false : undefined;
      });
      expect(seen).toEqual(["a", "b"].slice(0, stopAt));
      expect(body.given).toBe(1);
    }
    let pulled = 0;
    const seen: string[] = [];
    await readSse(
      {
        async *[Symbol.asyncIterator]() {
          for (const part of ["data: a\n\n", "data: b\n\n"]) {
            pulled++;
            yield bytes(part);
          }
        },
      },
      (event) => {
        seen.push(event.data);
        return false;
      },
    );
    expect({ seen, pulled }).toEqual({ seen: ["a"], pulled: 1 });
  });

  it("rejects with what the reader threw, giving nothing after it", async () => {
    const body = pushedBody(["data: a\n\ndata: b\n\n", "data: c\n\n"]);
    const seen: string[] = [];
    await expect(
      readSse(body, (event) => {
        seen.push(event.data);
        throw new Error(`refused ${event.data}`);
      }),
    ).rejects.toThrow("refused a");
    expect({ seen, given: body.given }).toEqual({ seen: ["a"], given: 1 });
    // An event completed only by the end of the body (a last "\r") is given, and can throw, there too.
    await expect(
      readSse(pushedBody(["data: z\r\r"]), () => {
        throw new Error("refused at the end");
      }),
    ).rejects.toThrow("refused at the end");
  });
});
