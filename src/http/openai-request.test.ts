import { describe, expect, it } from "vitest";
import { unstreamed } from "./openai-api.js";
import { parseChatRequest, parseJsonObject, parseResponsesRequest, routeOf } from "./openai-request.js";
import { imagePlan } from "./openai-turns.js";

describe("routeOf", () => {
  it.each([
    ["no model: the primary session", undefined, undefined, { model: "clawdis" }],
    ["clawdis: the primary session", "clawdis", undefined, { model: "clawdis" }],
    [
      "clawdis:<key>: that session",
      "clawdis:notes",
      undefined,
      { model: "clawdis:notes", sessionKey: "notes" },
    ],
    [
      "the header wins over the model",
      "clawdis:notes",
      "side",
      { model: "clawdis:notes", sessionKey: "side" },
    ],
    ["the header alone", "clawdis", ["side"], { model: "clawdis", sessionKey: "side" }],
  ])("%s", (_what, model, header, expected) => {
    expect(routeOf(model, header)).toEqual(expected);
  });

  it("another model is 404 model_not_found, naming the param", () => {
    expect(routeOf("gpt-4o", undefined)).toMatchObject({
      status: 404,
      code: "model_not_found",
      param: "model",
    });
  });

  it("a key the store cannot hold is 400 naming where it came from", () => {
    expect(routeOf("clawdis:", undefined)).toMatchObject({ status: 400, param: "model" });
    expect(routeOf("clawdis", "k".repeat(300))).toMatchObject({ status: 400, param: "x-clawdis-session" });
    expect(routeOf(7, undefined)).toMatchObject({ status: 400, param: "model" });
  });
});

describe("parseChatRequest", () => {
  it("takes the text parts of the newest user message only", () => {
    const ask = parseChatRequest(
      {
        messages: [
          { role: "system", content: "sys" },
          { role: "user", content: "old" },
          {
            role: "user",
            content: [
              { type: "text", text: "a" },
              { type: "image_url", image_url: { url: "data:image/png;base64,iVBO" } },
              { type: "text", text: "b" },
            ],
          },
          { role: "assistant", content: "after" },
        ],
        stream: true,
        stream_options: { include_usage: true },
      },
      undefined,
    );
    expect(ask).toEqual({
      text: "a\nb",
      images: [{ mimeType: "image/png", base64: "iVBO" }],
      model: "clawdis",
      stream: true,
      includeUsage: true,
    });
  });

  it.each([
    ["no messages", {}, "messages"],
    ["no user message", { messages: [{ role: "system", content: "x" }] }, "messages"],
    [
      "a newest user message without text",
      { messages: [{ role: "user", content: "  " }] },
      "messages[0].content",
    ],
    ["stream not a boolean", { messages: [{ role: "user", content: "x" }], stream: "yes" }, "stream"],
  ])("%s: 400 with param %s", (_what, body, param) => {
    expect(parseChatRequest(body, undefined)).toMatchObject({
      status: 400,
      param,
      type: "invalid_request_error",
    });
  });
});

describe("parseResponsesRequest", () => {
  it("input as text, or the newest user item's input_text parts", () => {
    expect(parseResponsesRequest({ input: "hi" }, undefined)).toMatchObject({ text: "hi", stream: false });
    const ask = parseResponsesRequest(
      {
        input: [
          { role: "user", content: "old" },
          { type: "message", role: "user", content: [{ type: "input_text", text: "new" }] },
          { role: "assistant", content: "later" },
        ],
      },
      undefined,
    );
    expect(ask).toMatchObject({ text: "new" });
  });

  it("no input is 400 param input", () => {
    expect(parseResponsesRequest({}, undefined)).toMatchObject({ status: 400, param: "input" });
  });
});

describe("images", () => {
  it("an image without text is input; a plain URL is kept as a URL", () => {
    const ask = parseResponsesRequest(
      {
        input: [{ role: "user", content: [{ type: "input_image", image_url: "https://example.com/a.png" }] }],
      },
      undefined,
    );
    expect(ask).toMatchObject({ text: "", images: [{ url: "https://example.com/a.png" }] });
  });

  it("imagePlan: a data: URL becomes a file in the dir, a URL a note without a file", () => {
    const plan = imagePlan(
      [{ mimeType: "image/jpeg", base64: "AAEC" }, { url: "https://example.com/a.png" }],
      "/state/plugins/openai/inbox",
      () => "id1",
    );
    expect(plan.files).toEqual([
      {
        dir: "/state/plugins/openai/inbox",
        path: "/state/plugins/openai/inbox/image-id1.jpg",
        base64: "AAEC",
      },
    ]);
    expect(plan.attachments).toEqual([
      {
        kind: "image",
        path: "/state/plugins/openai/inbox/image-id1.jpg",
        mimeType: "image/jpeg",
        fileName: "image-id1.jpg",
        sizeBytes: 3,
      },
      {
        kind: "image",
        note: "an image URL the gateway does not fetch (https://example.com/a.png); send images as data: URLs",
      },
    ]);
  });
});

describe("parseJsonObject", () => {
  it("a JSON object, else 400", () => {
    expect(parseJsonObject('{"status": 1, "type": "x"}')).toEqual({ json: { status: 1, type: "x" } });
    expect(parseJsonObject("[1]")).toMatchObject({ status: 400 });
    expect(parseJsonObject("{")).toMatchObject({ status: 400 });
  });
});

describe("unstreamed", () => {
  it("the rest after the streamed text; the whole when nothing streamed; nothing when it does not continue", () => {
    expect(unstreamed("abc", "ab")).toBe("c");
    expect(unstreamed("abc", "")).toBe("abc");
    expect(unstreamed("abc", "xy")).toBe("");
  });
});
