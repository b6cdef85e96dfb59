import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ClawdisError } from "../core/errors.js";
import { loadSectionSchema } from "../core/section-schema.js";
import { definePlugin, type PluginDefinition } from "../plugin-api/index.js";
import { pluginConfigPath, validatePluginConfig } from "./plugin-config.js";

const create = () => ({});
const withSchema = definePlugin({
  apiVersion: 2,
  id: "relay",
  configSchema: z.strictObject({
    url: z.string().default("http://x"),
    retries: z.number().int().min(0).default(1),
  }),
  create,
});
const withSection = definePlugin({
  apiVersion: 2,
  id: "relay",
  configSection: {
    key: "relay",
    schema: z.strictObject({ url: z.string().default("http://x") }).default({ url: "http://x" }),
    describe: { url: "where" },
  },
  create,
});
const bare = definePlugin({ apiVersion: 2, id: "bare", create }) as PluginDefinition;

function failure(fn: () => unknown): ClawdisError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ClawdisError) return error;
    throw error;
  }
  throw new Error("expected a ClawdisError");
}

describe("validatePluginConfig: plugins.entries.<id>.config", () => {
  it("parses the entry with the plugin's configSchema, `{}` when there is none", () => {
    expect(validatePluginConfig(withSchema, { retries: 3 })).toEqual({ url: "http://x", retries: 3 });
    expect(validatePluginConfig(withSchema, undefined)).toEqual({ url: "http://x", retries: 1 });
  });

  it("names every bad key by its full path", () => {
    const error = failure(() => validatePluginConfig(withSchema, { retries: -1, colour: "red" }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("plugins.entries.relay.config.retries:");
    expect(error.message).toContain("plugins.entries.relay.config:");
  });

  it("refuses settings for a plugin that takes none", () => {
    expect(validatePluginConfig(bare, {})).toBeUndefined();
    expect(failure(() => validatePluginConfig(bare, { a: 1 })).message).toBe(
      'plugins.entries.bare.config: plugin "bare" takes no settings; remove this key.',
    );
  });

  it("writes paths as they appear in clawdis.json", () => {
    expect(pluginConfigPath("x", ["allowFrom", 0])).toBe("plugins.entries.x.config.allowFrom[0]");
  });
});

describe("validatePluginConfig: a plugin with its own section", () => {
  it("gets the section's value from the loaded config (already validated with the file)", () => {
    const value = { url: "http://from-file" };
    expect(validatePluginConfig(withSection, undefined, { relay: value })).toBe(value);
  });

  it("gets the section's defaults from a config that has no such section", () => {
    expect(validatePluginConfig(withSection, undefined, { gateway: {} })).toEqual({ url: "http://x" });
  });

  it("refuses settings under plugins.entries, naming the section to move them to", () => {
    const error = failure(() => validatePluginConfig(withSection, { url: "y" }, { relay: { url: "x" } }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toBe(
      'plugins.entries.relay.config: plugin "relay" takes its settings from the top-level section "relay", not from here: move them there.',
    );
    expect(validatePluginConfig(withSection, {}, { relay: { url: "x" } })).toEqual({ url: "x" });
  });

  it("a section whose schema is a loader: its defaults once loaded; before, an error saying so", async () => {
    const lazy = definePlugin({
      apiVersion: 2,
      id: "lazy",
      configSection: {
        key: "lazy",
        schema: async () =>
          z.strictObject({ url: z.string().default("http://y") }).default({ url: "http://y" }),
        describe: { url: "where" },
      },
      create,
    }) as PluginDefinition;
    // With the section in the config nothing is loaded.
    expect(validatePluginConfig(lazy, undefined, { lazy: { url: "z" } })).toEqual({ url: "z" });
    const error = failure(() => validatePluginConfig(lazy, undefined, { gateway: {} }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain('the config has no "lazy" section and its schema is not loaded');
    await loadSectionSchema(lazy.configSection as NonNullable<PluginDefinition["configSection"]>);
    expect(validatePluginConfig(lazy, undefined, { gateway: {} })).toEqual({ url: "http://y" });
  });

  it("takes the section over a configSchema it also declares", () => {
    const both = { ...withSection, configSchema: z.strictObject({ other: z.string() }) } as PluginDefinition;
    expect(validatePluginConfig(both, undefined, { relay: { url: "s" } })).toEqual({ url: "s" });
  });
});
