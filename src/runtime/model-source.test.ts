import { describe, expect, it } from "vitest";
import { agentSchema } from "../core/config-schema.js";
import { configuredModel, endpointSource, shouldDiscoverModel } from "./model-source.js";

const agent = (fields: Record<string, unknown> = {}) => agentSchema.parse(fields);

describe("where the model comes from", () => {
  it.each([
    ["the config", { model: "gpt-x" }, { OPENAI_MODEL: "env-model" }, { name: "gpt-x", source: "config" }],
    ["env OPENAI_MODEL", {}, { OPENAI_MODEL: " llama3 " }, { name: "llama3", source: "env OPENAI_MODEL" }],
    ["nowhere (blank env)", {}, { OPENAI_MODEL: "  " }, undefined],
    ["nowhere", {}, {}, undefined],
  ])("%s", (_label, fields, env, expected) => {
    expect(configuredModel(agent(fields), env)).toEqual(expected);
  });

  it.each([
    [{ baseUrl: "http://127.0.0.1:11434/v1" }, {}, "config", true],
    [{}, { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" }, "env OPENAI_BASE_URL", true],
    [{}, {}, "default", false],
    [{ model: "m", baseUrl: "http://x/v1" }, {}, "config", false],
    [{}, { OPENAI_BASE_URL: "http://x/v1", OPENAI_MODEL: "m" }, "env OPENAI_BASE_URL", false],
  ])("endpoint %j %j: from %s, discover the only model: %s", (fields, env, source, discover) => {
    expect(endpointSource(agent(fields), env)).toBe(source);
    expect(shouldDiscoverModel(agent(fields), env)).toBe(discover);
  });
});
