import { describe, expect, it } from "vitest";
import { numberedModels, pickModel } from "./init-model.js";

describe("pickModel", () => {
  const models = ["llama3", "qwen2.5:14b", "Mistral"];
  it.each([
    ["1", { ok: true, model: "llama3", listed: true }],
    [" 3 ", { ok: true, model: "Mistral", listed: true }],
    ["qwen2.5:14b", { ok: true, model: "qwen2.5:14b", listed: true }],
    ["mistral", { ok: true, model: "Mistral", listed: true }],
    ["phi3", { ok: true, model: "phi3", listed: false }],
    ["4", { ok: false, error: "there is no model 4: choose 1 to 3, or type a name" }],
    ["0", { ok: false, error: "there is no model 0: choose 1 to 3, or type a name" }],
  ])("%j", (answer, expected) => {
    expect(pickModel(answer, models)).toEqual(expected);
  });

  it("takes a model whose name is a number as that name", () => {
    expect(pickModel("7", ["a", "7"])).toEqual({ ok: true, model: "7", listed: true });
  });
});

describe("numberedModels", () => {
  it("numbers from 1, aligned", () => {
    const many = Array.from({ length: 10 }, (_, i) => `m${i}`);
    expect(numberedModels(["a", "b"])).toBe("  1) a\n  2) b");
    expect(numberedModels(many).split("\n")[0]).toBe("   1) m0");
    expect(numberedModels(many).split("\n")[9]).toBe("  10) m9");
  });
});
