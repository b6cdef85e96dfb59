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

  it("warns about no built-in section: every transport of this build is there to run it", async () => {
    const options = {
      sections: await builtinConfigSections({ TELEGRAM_BOT_TOKEN: "1:x" }),
      unclaimed: "error" as const,
    };
    expect(validateConfigText("{ telegram: { botToken: '1:x' } }", "c.json", options).warnings).toEqual([]);
    expect(validateConfigText("{ webhooks: { a: {} } }", "c.json", options).warnings).toEqual([]);
  });
});
