import { describe, expect, it } from "vitest";
import { validateConfigText } from "./core/config.js";
import { builtinConfigSections, builtinPlugins } from "./main.js";

describe("the composition root", () => {
  it("registers the config section of every built-in plugin, as a section whose plugin runs", async () => {
    const sections = await builtinConfigSections({});
    const plugins = await builtinPlugins();
    const declared = plugins.filter((plugin) => plugin.configSection !== undefined);
    expect(declared.length).toBeGreaterThan(0);
    for (const plugin of declared) {
      const entry = sections.find((candidate) => candidate.owner === plugin.id);
      expect(entry?.section, plugin.id).toBe(plugin.configSection);
      expect(entry?.unavailable, plugin.id).toBeUndefined();
    }
    // A section registered without a plugin belongs to no built-in plugin (else it would never warn rightly).
    for (const entry of sections.filter((candidate) => candidate.unavailable !== undefined)) {
      expect(plugins.map((plugin) => plugin.id)).not.toContain(entry.owner);
    }
  });

  it.each([
    ["a bot token in the file", "{ telegram: { botToken: '1:x' } }", {}, "telegram.botToken"],
    ["a bot token in the environment", "{}", { TELEGRAM_BOT_TOKEN: "1:x" }, "TELEGRAM_BOT_TOKEN"],
  ])("warns about Telegram for %s", async (_name, text, env, key) => {
    const sections = await builtinConfigSections(env);
    expect(validateConfigText(text, "c.json", { sections, unclaimed: "error" }).warnings).toEqual([
      `${key} is set but the Telegram transport is not available in this build; it is ignored`,
    ]);
  });

  it("warns about WhatsApp when it is enabled, and about nothing on defaults or an empty token variable", async () => {
    const options = {
      sections: await builtinConfigSections({ TELEGRAM_BOT_TOKEN: "" }),
      unclaimed: "error" as const,
    };
    expect(validateConfigText("{ whatsapp: { enabled: true } }", "c.json", options).warnings).toEqual([
      "whatsapp.enabled is true but the WhatsApp transport is not available in this build; it is ignored",
    ]);
    expect(
      validateConfigText("{ whatsapp: { enabled: false }, webhooks: { a: {} } }", "c.json", options).warnings,
    ).toEqual([]);
  });
});
