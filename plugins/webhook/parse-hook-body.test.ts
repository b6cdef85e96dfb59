import { describe, expect, it } from "vitest";
import { type HookBody, parseHookBody } from "./parse-hook-body.js";

describe("parseHookBody", () => {
  it.each<[string, string, string | undefined, HookBody]>([
    ["JSON text", '{"text":"build failed"}', "application/json", { ok: true, text: "build failed" }],
    ["JSON message", '{"message":"hi"}', "application/json; charset=utf-8", { ok: true, text: "hi" }],
    ["text wins over message", '{"text":"a","message":"b"}', "application/json", { ok: true, text: "a" }],
    [
      "JSON with messageId",
      '{"text":"x","messageId":"evt-1"}',
      "application/json",
      { ok: true, text: "x", messageId: "evt-1" },
    ],
    [
      "numeric messageId",
      '{"text":"x","messageId":42}',
      "application/json",
      { ok: true, text: "x", messageId: "42" },
    ],
    ["vendor +json type", '{"text":"x"}', "application/vnd.github+json", { ok: true, text: "x" }],
    ["JSON text is trimmed", '{"text":"  /new  "}', "application/json", { ok: true, text: "/new" }],
    ["plain text", "disk is 91% full\n", "text/plain", { ok: true, text: "disk is 91% full" }],
    [
      "plain text that looks like JSON stays text",
      '{"text":"x"}',
      "text/plain",
      { ok: true, text: '{"text":"x"}' },
    ],
    ["no content type, plain", "hello", undefined, { ok: true, text: "hello" }],
    [
      "curl -d form type with JSON",
      '{"text":"hi"}',
      "application/x-www-form-urlencoded",
      { ok: true, text: "hi" },
    ],
    [
      "form type, JSON without text",
      '{"a":1}',
      "application/x-www-form-urlencoded",
      { ok: true, text: '{"a":1}' },
    ],
    ["form type, broken JSON", "{oops", "application/x-www-form-urlencoded", { ok: true, text: "{oops" }],
    ["invalid JSON", "{oops", "application/json", { ok: false, message: "the body is not valid JSON" }],
    [
      "JSON array",
      "[1]",
      "application/json",
      { ok: false, message: 'a JSON body must be an object like {"text": "…"}' },
    ],
    [
      "JSON without text",
      '{"foo":"bar"}',
      "application/json",
      { ok: false, message: 'the JSON body needs a non-empty string "text" (or "message")' },
    ],
    [
      "JSON blank text",
      '{"text":"  "}',
      "application/json",
      { ok: false, message: 'the JSON body needs a non-empty string "text" (or "message")' },
    ],
    [
      "JSON bad messageId",
      '{"text":"x","messageId":""}',
      "application/json",
      { ok: false, message: '"messageId" must be a non-empty string' },
    ],
    [
      "empty plain body",
      " \n",
      "text/plain",
      { ok: false, message: "the body is empty: send the text to hand to the agent" },
    ],
  ])("%s", (_name, raw, contentType, expected) => {
    expect(parseHookBody(raw, contentType)).toEqual(expected);
  });
});
