import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { absolutePath } from "./absolute-path.js";

describe("absolutePath", () => {
  it.each([
    "/state/sessions/a.jsonl",
    "/state//sessions/./b.jsonl",
    "/state/sessions/../c.jsonl",
    "/state/sessions/d.jsonl/",
    "relative/e.jsonl",
    "./f.jsonl",
  ])("gives what resolve gives for %s, the first time and again", (path) => {
    expect(absolutePath(path)).toBe(resolve(path));
    expect(absolutePath(path)).toBe(resolve(path));
  });

  it("stays right past the number of answers it keeps", () => {
    for (let i = 0; i < 1500; i++) expect(absolutePath(`/s/${i}/../t${i}.jsonl`)).toBe(`/s/t${i}.jsonl`);
    expect(absolutePath("/s/1/../t1.jsonl")).toBe("/s/t1.jsonl");
  });
});
