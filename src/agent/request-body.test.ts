import { describe, expect, it } from "vitest";
import type { StoredChatMessage } from "../sessions/types.js";
import { chatRequestBody, convertMessage } from "./request-body.js";

const history = (): StoredChatMessage[] => [
  { role: "system", content: "be brief" },
  { role: "user", content: 'héllo 👋 "quoted" \\ back\nslash', name: "Ann Lee" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } }],
  },
  { role: "tool", tool_call_id: "c1", content: "a.txt" },
  { role: "assistant", content: "done" },
];

describe("chatRequestBody", () => {
  it("is the JSON of the converted messages and the other fields, in UTF-8", () => {
    const messages = history();
    const params = { model: "m", stream: true, stream_options: { include_usage: true }, max_tokens: 9 };
    const bytes = chatRequestBody(params, messages);
    expect(JSON.parse(bytes.toString("utf8"))).toEqual({ ...params, messages: messages.map(convertMessage) });
    expect(bytes.length).toBe(
      Buffer.byteLength(JSON.stringify({ messages: messages.map(convertMessage), ...params })),
    );
  });

  it("holds no other field when there is none, and an empty list of messages", () => {
    expect(JSON.parse(chatRequestBody({}, history()).toString("utf8"))).toEqual({
      messages: history().map(convertMessage),
    });
    expect(JSON.parse(chatRequestBody({ model: "m" }, []).toString("utf8"))).toEqual({
      messages: [],
      model: "m",
    });
  });

  const parsed = (bytes: Buffer) => JSON.parse(bytes.toString("utf8")) as { messages: unknown[] };

  it("is right again for the next request of the same context, grown, cut or changed in the middle", () => {
    const params = { model: "m" };
    const messages = history();
    chatRequestBody(params, messages);
    // Grown: the same objects and more (text outside ASCII before and after the part reused).
    messages.push({ role: "user", content: "ünïcödé again ✓" }, { role: "assistant", content: "ok" });
    expect(parsed(chatRequestBody(params, messages)).messages).toEqual(messages.map(convertMessage));
    // Cut: fewer messages than last time.
    const cut = messages.slice(0, 3);
    expect(parsed(chatRequestBody(params, cut)).messages).toEqual(cut.map(convertMessage));
    // Changed in the middle: a message replaced by another object with other content.
    const changed = [
      ...messages.slice(0, 3),
      { role: "tool" as const, tool_call_id: "c1", content: "b.txt" },
    ];
    expect(parsed(chatRequestBody(params, changed)).messages).toEqual(changed.map(convertMessage));
    // The system prompt changed (a new object each turn, equal fields reuse its bytes; other fields do not).
    const prompt = [{ role: "system" as const, content: "be long" }, ...messages.slice(1)];
    expect(parsed(chatRequestBody(params, prompt)).messages).toEqual(prompt.map(convertMessage));
    expect(parsed(chatRequestBody({ model: "n" }, prompt))).toEqual({
      model: "n",
      messages: prompt.map(convertMessage),
    });
  });

  it("copies the messages a context sent last time as bytes, from its second request on", () => {
    const first: StoredChatMessage = { role: "user", content: "first" };
    const messages: StoredChatMessage[] = [{ role: "system", content: "s" }, first];
    // Sent once: nothing kept (a change is seen, as for any message encoded afresh).
    chatRequestBody({}, messages);
    first.content = "second";
    expect(parsed(chatRequestBody({}, messages)).messages[1]).toEqual({ role: "user", content: "second" });
    // Sent twice: its bytes are kept. Messages are not changed once sent (the contract that makes this safe): a
    // change would not be seen.
    first.content = "changed";
    messages.push({ role: "assistant", content: "a" });
    expect(parsed(chatRequestBody({}, messages)).messages).toEqual([
      { role: "system", content: "s" },
      { role: "user", content: "second" },
      { role: "assistant", content: "a" },
    ]);
  });
});
