import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PluginConfigSection } from "../plugin-api/types.js";
import { objectKeysAt } from "./config-schema-walk.js";
import { CORE_CONFIG_KEYS, composeConfigSchema, sectionEntry } from "./config-sections.js";
import { ClawdisError } from "./errors.js";

const section = (overrides: Partial<PluginConfigSection<unknown>> = {}): PluginConfigSection<unknown> => ({
  key: "relay",
  schema: z.strictObject({ url: z.string().optional() }).default({}),
  describe: { url: "where" },
  ...overrides,
});

function composeError(...sections: [string, PluginConfigSection<unknown>][]): ClawdisError {
  try {
    composeConfigSchema(sections.map(([owner, s]) => sectionEntry(owner, s)));
  } catch (error) {
    if (error instanceof ClawdisError) return error;
    throw error;
  }
  throw new Error("expected the composition to fail");
}

describe("composeConfigSchema", () => {
  it("adds each section as a strict top-level key after the core's", () => {
    const schema = composeConfigSchema([sectionEntry("relay", section())]);
    expect(objectKeysAt(schema, [])).toEqual([...CORE_CONFIG_KEYS, "relay"]);
    expect(schema.safeParse({ relay: { url: "x" } }).success).toBe(true);
    expect(schema.safeParse({ relay: { uri: "x" } }).success).toBe(false);
    expect(schema.safeParse({ other: {} }).success).toBe(false);
  });

  it.each([
    ["a core key", section({ key: "gateway" }), 'its key "gateway" is one of the core\'s own sections'],
    ["a key that is not a word", section({ key: "Relay Key" }), 'its key "Relay Key" is not a word'],
    [
      "a schema that is not zod",
      section({ schema: { safeParse: () => ({}) } as never }),
      "not a zod 4 schema",
    ],
    [
      "a schema that refuses a missing section",
      section({ schema: z.strictObject({ url: z.string() }) }),
      "its schema refuses a config without the section",
    ],
    ["describe that is not a map of text", section({ describe: { url: 1 } as never }), "describe must map"],
  ])("refuses %s, naming the plugin (PLUGIN_INVALID)", (_name, bad, problem) => {
    const error = composeError(["relay-plugin", bad]);
    expect(error.code).toBe("PLUGIN_INVALID");
    expect(error.message).toContain('Plugin "relay-plugin" declares a config section that cannot be used');
    expect(error.message).toContain(problem);
  });

  it("refuses two plugins claiming the same key", () => {
    const error = composeError(["one", section()], ["two", section()]);
    expect(error.message).toBe(
      'Plugins "one" and "two" both declare the config section "relay"; remove one of them from plugins.load.',
    );
  });
});
