import { describe, expect, it } from "vitest";
import { parseSearchRequest, SEARCH_DEFAULT_LIMIT } from "./search-request.js";

const NOW = Date.parse("2026-03-10T12:00:00Z");

describe("a search as asked", () => {
  it("takes the defaults and every option", () => {
    const plain = parseSearchRequest({ q: "x" }, NOW);
    expect(plain).toMatchObject({ limit: SEARCH_DEFAULT_LIMIT, matcher: { query: "x", regex: false } });
    expect(plain).not.toHaveProperty("role");
    const all = parseSearchRequest(
      { q: "a|b", regex: true, key: "group:1", since: "1d", role: "tool", limit: "1000" },
      NOW,
    );
    expect(all).toMatchObject({ limit: 1000, key: "group:1", role: "tool", since: NOW - 86_400_000 });
    expect(all).toMatchObject({ matcher: { regex: true } });
  });

  it.each([
    [{ q: "" }, /empty/],
    [{ q: "x", limit: "0" }, /limit must be a whole number from 1 to 1000/],
    [{ q: "x", limit: "1001" }, /limit must be/],
    [{ q: "x", limit: "5x" }, /limit must be/],
    [{ q: "x", role: "system" }, /role must be one of user, assistant, tool/],
    [{ q: "x", since: "soon" }, /since must be/],
    [{ q: "x", key: "" }, /^key: /],
    [{ q: "(", regex: true }, /not a valid regular expression/],
  ])("refuses %j", (request, why) => {
    expect(parseSearchRequest(request, NOW)).toMatch(why);
  });
});
