import { describe, expect, it } from "vitest";
import { buildMatcher, messageText, type SearchMatcher, verbatimRun } from "./search-match.js";

function matcher(query: string, regex = false): SearchMatcher {
  const m = buildMatcher(query, regex);
  if (typeof m === "string") throw new Error(m);
  return m;
}

/** Whether the raw JSON line of a message with `content` passes the pre-filter, and whether its text matches. */
function both(m: SearchMatcher, content: string): { raw: boolean; text: boolean } {
  const line = JSON.stringify({ type: "message", id: "e1", ts: "t", message: { role: "user", content } });
  const raw = Buffer.from(line).toString("latin1");
  if (m.prefilter) m.prefilter.lastIndex = 0;
  return { raw: m.prefilter ? m.prefilter.test(raw) : true, text: m.find(content) !== undefined };
}

describe("search matcher", () => {
  it.each([
    // query, text, expected match [start, end] or undefined
    ["hello", "Say HELLO there", [4, 9]],
    ["Hello", "say hello", [4, 9]],
    ["a.b", "axb a.b", [4, 7]],
    ["(x)", "f(x) = 1", [1, 4]],
    ['said "hi"', 'he said "hi"\nthen left', [3, 12]],
    ["line one\nline", "line one\nline two", [0, 13]],
    ["back\\slash", "a back\\slash b", [2, 12]],
    ["café", "CAFÉ au lait", [0, 4]],
    ["k", "\u212A only", undefined], // the Kelvin sign is not a k: ASCII folds to ASCII only
    ["missing", "nothing here", undefined],
  ])("plain %j in %j", (query, text, expected) => {
    const found = matcher(query).find(text);
    expect(found ? [found.start, found.end] : undefined).toEqual(expected);
  });

  it.each([
    ["colou?r", "the Color red", [4, 9]],
    ["^deploy\\b", "Deploy now", [0, 6]],
    ["\\d{3}-\\d{4}", "call 555-1234", [5, 13]],
  ])("regex %j in %j", (query, text, expected) => {
    const found = matcher(query, true).find(text);
    expect(found ? [found.start, found.end] : undefined).toEqual(expected);
  });

  it("refuses an empty query and a regex that does not compile", () => {
    expect(buildMatcher("", false)).toMatch(/empty/);
    expect(buildMatcher("a(b", true)).toMatch(/not a valid regular expression/);
    expect(typeof buildMatcher("a(b", false)).toBe("object");
  });

  it.each([
    ['said "hi" twice', " twice"],
    ["path/to/file.txt", "file.txt"],
    ["<b>bold</b>", "bold"],
    ["naïve approach", "ve approach"],
    ['"\\"', ""],
    ["plain words", "plain words"],
  ])("the pre-filter of %j is the longest verbatim run %j", (query, run) => {
    expect(verbatimRun(query)).toBe(run);
    expect(matcher(query).prefilter?.source).toBe(run === "" ? undefined : matcher(run).prefilter?.source);
  });

  it("has no pre-filter for a regex", () => {
    expect(matcher("abc", true).prefilter).toBeUndefined();
  });

  it.each([
    ['say "hello"', 'I say "Hello" to you'],
    ["two\nlines", "two\nlines here"],
    ["tab\there", "a tab\there"],
    ["C:\\dir", "in C:\\dir now"],
    ["日本", "日本語 text"],
    ["über", "Über alles"],
  ])("a line whose text matches %j passes the pre-filter, escaped or not", (query, content) => {
    const m = matcher(query);
    expect(both(m, content)).toEqual({ raw: true, text: true });
  });

  it("the pre-filter lets most lines go by unparsed", () => {
    expect(both(matcher("quarterly report"), "nothing of the kind")).toEqual({ raw: false, text: false });
  });

  it("searches the content, its text parts and the tool calls", () => {
    expect(messageText({ role: "user", content: "hi" })).toBe("hi");
    expect(messageText({ role: "user", content: [{ type: "text", text: "a" }, { type: "image" }] })).toBe(
      "a",
    );
    expect(
      messageText({
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
        ],
      }),
    ).toBe('bash {"command":"ls"}');
    expect(messageText(null)).toBeUndefined();
  });
});
