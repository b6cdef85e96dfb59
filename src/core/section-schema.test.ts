import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { PluginConfigSection } from "../plugin-api/types.js";
import { composeConfigSchema, sectionEntry } from "./config-sections.js";
import { ClawdisError } from "./errors.js";
import { loadSectionSchema, sectionSchema, withSchemas } from "./section-schema.js";

/** A section whose schema is a loader, counting its loads. */
function lazySection(load: () => Promise<z.ZodType<unknown>>) {
  const counts = { loads: 0 };
  const section: PluginConfigSection<unknown> = {
    key: "relay",
    schema: () => {
      counts.loads++;
      return load();
    },
    describe: { url: "where" },
  };
  return { section, counts };
}

const relaySchema = z.strictObject({ url: z.string().default("http://x") }).default({ url: "http://x" });

describe("section schemas given as loaders", () => {
  it("is not at hand until loaded, then is, loaded once per section", async () => {
    const { section, counts } = lazySection(async () => relaySchema);
    expect(sectionSchema(section)).toBeUndefined();
    expect(counts.loads).toBe(0);
    await expect(loadSectionSchema(section)).resolves.toBe(relaySchema);
    await loadSectionSchema(section);
    expect(sectionSchema(section)).toBe(relaySchema);
    expect(counts.loads).toBe(1);
  });

  it("a schema given as one is at hand at once", () => {
    const section: PluginConfigSection<unknown> = { key: "relay", schema: relaySchema, describe: {} };
    expect(sectionSchema(section)).toBe(relaySchema);
  });

  it("composing refuses a section whose loader did not run; withSchemas makes it composable", async () => {
    const { section } = lazySection(async () => relaySchema);
    const entries = [sectionEntry("relay-plugin", section)];
    expect(() => composeConfigSchema(entries)).toThrow(/its schema was not loaded/);
    const schema = composeConfigSchema(await withSchemas(entries));
    expect(schema.parse({})).toMatchObject({ relay: { url: "http://x" } });
    expect(schema.safeParse({ relay: { uri: "y" } }).success).toBe(false);
  });

  it("a loader that fails is a PLUGIN_INVALID naming the plugin and the section", async () => {
    const { section } = lazySection(async () => {
      throw new Error("config-schema.js is missing");
    });
    const error = await withSchemas([sectionEntry("relay-plugin", section)]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClawdisError);
    expect((error as ClawdisError).code).toBe("PLUGIN_INVALID");
    expect((error as ClawdisError).message).toBe(
      'Plugin "relay-plugin": the schema of its config section "relay" could not be loaded: config-schema.js is missing.',
    );
  });

  it("a loader that gives something other than a zod schema is refused when composed", async () => {
    const { section } = lazySection(async () => ({ safeParse: () => ({}) }) as never);
    const entries = await withSchemas([sectionEntry("relay-plugin", section)]);
    expect(() => composeConfigSchema(entries)).toThrow(/not a zod 4 schema/);
  });
});
