import { describe, expect, it } from "vitest";
import { type ConfigDiff, coreNeed, describeDiff, diffConfig, type PluginReloadInfo } from "./config-diff.js";
import { configSchema, defaultConfig } from "./config-schema.js";
import { schemaKeyPaths } from "./config-schema-walk.js";

type Json = Record<string, unknown>;

/** A fully defaulted core config plus plugin sections, with `edit` applied to a copy. */
function config(edit: (c: Json) => void = () => {}): Json {
  const c: Json = {
    ...structuredClone(defaultConfig()),
    telegram: { botToken: "123:secret-token", allowFrom: [111], requireMention: true, apiRoot: "https://x" },
    echo: { allowFrom: ["alice"], maxTextLength: 4000 },
    webhooks: {},
  };
  edit(c);
  return c;
}

const at = (c: Json, path: string): Json =>
  path === "" ? c : path.split(".").reduce<Json>((node, key) => node[key] as Json, c);

/** An edit that sets the key at `path` ("a.b.c") to `value`. */
const set =
  (path: string, value: unknown) =>
  (c: Json): void => {
    const keys = path.split(".");
    const leaf = keys.pop() as string;
    at(c, keys.join("."))[leaf] = value;
  };

const telegram: PluginReloadInfo = {
  id: "telegram",
  section: "telegram",
  live: ["allowFrom", "requireMention"],
  restartOn: [],
  on: [true, true],
};
const echo: PluginReloadInfo = {
  id: "echo-transport",
  section: "echo",
  live: [],
  restartOn: [],
  on: [true, true],
};
const whatsapp: PluginReloadInfo = {
  id: "whatsapp",
  section: "whatsapp",
  live: [],
  restartOn: ["inbound.groupChat.mentionPatterns"],
  on: [true, true],
};
const PLUGINS = [telegram, echo, whatsapp];

const plan = (edit: (c: Json) => void, plugins: readonly PluginReloadInfo[] = PLUGINS): ConfigDiff =>
  diffConfig(config(), config(edit), plugins);

describe("diffConfig: what a change needs", () => {
  it.each<[string, (c: Json) => void, Partial<ConfigDiff>]>([
    ["nothing changed", () => {}, { need: "nothing", changed: [] }],
    [
      "inbound.allowFrom (WhatsApp's allowlist)",
      (c) => {
        at(c, "inbound").allowFrom = ["+4915123456789"];
      },
      { need: "live", live: ["inbound.allowFrom"], transports: [] },
    ],
    [
      "telegram.allowFrom, declared live by the plugin",
      (c) => {
        at(c, "telegram").allowFrom = [111, 222];
      },
      { need: "live", live: ["telegram.allowFrom"], transports: [] },
    ],
    [
      "mention settings",
      (c) => {
        at(c, "inbound.groupChat").requireMention = false;
        at(c, "telegram").requireMention = false;
      },
      { need: "live", live: ["inbound.groupChat.requireMention", "telegram.requireMention"] },
    ],
    [
      "the agent: endpoint, key, model, tools",
      (c) => {
        const agent = at(c, "inbound.reply.agent");
        agent.baseUrl = "http://127.0.0.1:9/v1";
        agent.apiKey = "sk-new";
        agent.model = "other";
        agent.tools = { main: ["read_file"], groups: [], people: {} };
      },
      {
        need: "live",
        // Keys in the order of the old config, then the keys it did not have.
        live: [
          "inbound.reply.agent.tools.main",
          "inbound.reply.agent.baseUrl",
          "inbound.reply.agent.apiKey",
          "inbound.reply.agent.model",
        ],
      },
    ],
    [
      "session settings: idle time, reset triggers, timeouts, compaction, passivation",
      (c) => {
        const session = at(c, "inbound.reply.session");
        session.idleMinutes = 5;
        session.resetTriggers = ["/new", "/reset"];
        at(c, "inbound.reply.session.timeouts").toolExecutionSeconds = 5;
        at(c, "inbound.reply.session.compaction").threshold = 0.5;
        session.passivateAfterMinutes = 0;
      },
      {
        need: "live",
        live: [
          "inbound.reply.session.idleMinutes",
          "inbound.reply.session.resetTriggers",
          "inbound.reply.session.timeouts.toolExecutionSeconds",
          "inbound.reply.session.passivateAfterMinutes",
          "inbound.reply.session.compaction.threshold",
        ],
      },
    ],
    [
      "logging",
      (c) => {
        at(c, "logging").level = "debug";
      },
      { need: "live", live: ["logging.level"] },
    ],
    [
      "a plugin's own key it does not apply live: that plugin alone restarts",
      (c) => {
        at(c, "echo").maxTextLength = 10;
      },
      {
        need: "transport",
        live: [],
        transports: [{ id: "echo-transport", action: "restart", keys: ["echo.maxTextLength"] }],
      },
    ],
    [
      "a live key and a restart key of one plugin: it restarts",
      (c) => {
        at(c, "telegram").allowFrom = [1];
        at(c, "telegram").apiRoot = "https://y";
      },
      {
        need: "transport",
        live: ["telegram.allowFrom"],
        transports: [{ id: "telegram", action: "restart", keys: ["telegram.apiRoot"] }],
      },
    ],
    [
      "a core key a plugin reads only at create: applied live, and that plugin restarts",
      (c) => {
        at(c, "inbound.groupChat").mentionPatterns = ["clawd"];
      },
      {
        need: "transport",
        live: ["inbound.groupChat.mentionPatterns"],
        transports: [{ id: "whatsapp", action: "restart", keys: ["inbound.groupChat.mentionPatterns"] }],
      },
    ],
    ...(["gateway.port", "gateway.bind", "plugins.load"] as const).map(
      (key): [string, (c: Json) => void, Partial<ConfigDiff>] => [
        key,
        (c) => {
          const [top, leaf] = key.split(".") as [string, string];
          at(c, top)[leaf] = leaf === "load" ? ["./x"] : leaf === "port" ? 1 : "0.0.0.0";
        },
        { need: "gateway", gateway: [key] },
      ],
    ),
    [
      "where the sessions live: store, scope, mainKey, workspace",
      (c) => {
        const session = at(c, "inbound.reply.session");
        session.store = "/elsewhere/sessions.json";
        session.scope = "global";
        session.mainKey = "me";
        at(c, "inbound.reply.agent").workspace = "/ws";
      },
      {
        need: "gateway",
        gateway: [
          "inbound.reply.session.scope",
          "inbound.reply.session.mainKey",
          "inbound.reply.session.store",
          "inbound.reply.agent.workspace",
        ],
      },
    ],
    [
      "a gateway key with live ones: the gateway restart applies all",
      (c) => {
        at(c, "gateway").port = 1;
        at(c, "inbound").allowFrom = ["*"];
      },
      { need: "gateway", gateway: ["gateway.port"], live: ["inbound.allowFrom"] },
    ],
  ])("%s", (_name, edit, expected) => {
    expect(plan(edit)).toMatchObject(expected);
  });

  it("plugins.entries.<id>.enabled of a plugin without a section: it stops", () => {
    const relay: PluginReloadInfo = { id: "relay", live: ["url"], restartOn: [], on: [true, false] };
    expect(plan(set("plugins.entries", { relay: { enabled: false } }), [relay])).toMatchObject({
      need: "transport",
      transports: [{ id: "relay", action: "stop", keys: ["plugins.entries.relay"] }],
    });
  });

  it("plugins.entries.<id>.config below a live path is live; another key restarts the plugin", () => {
    const relay: PluginReloadInfo = { id: "relay", live: ["url"], restartOn: [], on: [true, true] };
    const before = config((c) => {
      at(c, "plugins").entries = { relay: { enabled: true, config: { url: "a", size: 1 } } };
    });
    const live = config((c) => {
      at(c, "plugins").entries = { relay: { enabled: true, config: { url: "b", size: 1 } } };
    });
    const restart = config((c) => {
      at(c, "plugins").entries = { relay: { enabled: true, config: { url: "a", size: 2 } } };
    });
    expect(diffConfig(before, live, [relay])).toMatchObject({
      need: "live",
      live: ["plugins.entries.relay.config.url"],
    });
    expect(diffConfig(before, restart, [relay])).toMatchObject({
      need: "transport",
      transports: [{ id: "relay", action: "restart", keys: ["plugins.entries.relay.config.size"] }],
    });
  });

  it("a plugin switched on by a key (a bot token added) starts; switched off, it stops", () => {
    const off: PluginReloadInfo = { ...telegram, on: [false, true] };
    expect(plan(set("telegram.botToken", "9:x"), [off])).toMatchObject({
      need: "transport",
      transports: [{ id: "telegram", action: "start", keys: ["telegram.botToken"] }],
    });
    const webhooks: PluginReloadInfo = {
      id: "webhook",
      section: "webhooks",
      live: ["*"],
      restartOn: [],
      on: [false, true],
    };
    // Every hook key is live, but the first hook switches the plugin on.
    expect(plan(set("webhooks", { ci: { tools: [] } }), [webhooks])).toMatchObject({
      need: "transport",
      live: ["webhooks.ci"],
      transports: [{ id: "webhook", action: "start", keys: [] }],
    });
    expect(plan(() => {}, [{ ...telegram, on: [true, false] }]).transports).toEqual([
      { id: "telegram", action: "stop", keys: [] },
    ]);
  });

  it("the section of a plugin that is off, or of no plugin, is changed but unused", () => {
    expect(plan(set("telegram.allowFrom", [5]), [{ ...telegram, on: [false, false] }])).toMatchObject({
      need: "nothing",
      changed: ["telegram.allowFrom"],
      unused: ["telegram.allowFrom"],
    });
    expect(plan(set("echo.maxTextLength", 5), [])).toMatchObject({
      need: "nothing",
      unused: ["echo.maxTextLength"],
    });
    expect(plan(set("$schema", "./schema.json"), [])).toMatchObject({
      need: "nothing",
      unused: ["$schema"],
    });
  });

  it("names keys added to and removed from records by their path (a hook's name)", () => {
    const before = config(set("webhooks", { ci: { tools: [] }, "odd name": { tools: [] } }));
    const after = config(set("webhooks", { deploy: { tools: [] } }));
    expect(diffConfig(before, after, []).changed).toEqual([
      "webhooks.ci",
      'webhooks["odd name"]',
      "webhooks.deploy",
    ]);
  });
});

describe("every core key is classified on purpose", () => {
  // A key added to the schema needs a line here: live, or what it restarts.
  const EXPECTED: Record<string, "live" | "gateway" | "nothing"> = {
    $schema: "nothing",
    "inbound.allowFrom": "live",
    "inbound.groupChat.requireMention": "live",
    "inbound.groupChat.mentionPatterns": "live",
    "inbound.groupChat.historyLimit": "live",
    "inbound.reply.session.scope": "gateway",
    "inbound.reply.session.idleMinutes": "live",
    "inbound.reply.session.resetTriggers": "live",
    "inbound.reply.session.store": "gateway",
    "inbound.reply.session.mainKey": "gateway",
    "inbound.reply.session.timeouts.prefillSeconds": "live",
    "inbound.reply.session.timeouts.firstTokenSeconds": "live",
    "inbound.reply.session.timeouts.noProgressSeconds": "live",
    "inbound.reply.session.timeouts.toolExecutionSeconds": "live",
    "inbound.reply.session.timeouts.sidecarLlmSeconds": "live",
    "inbound.reply.session.timeouts.turnLlmSeconds": "live",
    "inbound.reply.session.passivateAfterMinutes": "live",
    "inbound.reply.session.dailyResetAt": "live",
    "inbound.reply.session.maintenance.mode": "live",
    "inbound.reply.session.maintenance.pruneAfterDays": "live",
    "inbound.reply.session.maintenance.maxEntries": "live",
    "inbound.reply.session.maintenance.maxDiskMb": "live",
    "inbound.reply.session.titles": "live",
    "inbound.reply.session.compaction.threshold": "live",
    "inbound.reply.session.compaction.keepRecentToolResults": "live",
    "inbound.reply.session.compaction.keepRecentMessages": "live",
    "inbound.reply.agent.baseUrl": "live",
    "inbound.reply.agent.apiKey": "live",
    "inbound.reply.agent.model": "live",
    "inbound.reply.agent.contextTokens": "live",
    "inbound.reply.agent.maxOutputTokens": "live",
    "inbound.reply.agent.compactionModel": "live",
    "inbound.reply.agent.fallbackModel": "live",
    "inbound.reply.agent.systemPrompt": "live",
    "inbound.reply.agent.workspace": "gateway",
    "inbound.reply.agent.approvals": "live",
    "inbound.reply.agent.tools.main": "live",
    "inbound.reply.agent.tools.groups": "live",
    "gateway.port": "gateway",
    "gateway.bind": "gateway",
    "gateway.parkedReplyWarnSeconds": "live",
    "gateway.timeZone": "live",
    "gateway.openai.enabled": "live",
    "gateway.openai.tools": "live",
    "plugins.load": "gateway",
    "plugins.entries.*.enabled": "gateway",
    "plugins.entries.*.config": "gateway",
    "logging.level": "live",
  };

  it("matches the table (plugins.entries is decided per plugin, see above)", () => {
    const leaves = schemaKeyPaths(configSchema).filter((p) => p.leaf);
    const actual = Object.fromEntries(leaves.map((p) => [p.path.join("."), coreNeed(p.path)]));
    expect(actual).toEqual(EXPECTED);
  });
});

describe("describeDiff: the one log line of a reload", () => {
  it("names every changed key and what it needs", () => {
    const diff = plan((c) => {
      at(c, "inbound").allowFrom = ["+4915123456789"];
      at(c, "echo").maxTextLength = 10;
    });
    expect(describeDiff(diff)).toBe(
      "config change: applied live: inbound.allowFrom; echo-transport restarts for echo.maxTextLength",
    );
    expect(describeDiff(plan(set("gateway.port", 1)))).toBe(
      "config change: the gateway restarts for gateway.port",
    );
    expect(describeDiff(plan(() => {}))).toBe("config re-read: no setting changed");
  });

  it("never prints a secret's value, only its key path", () => {
    const diff = plan((c) => {
      at(c, "inbound.reply.agent").apiKey = "sk-very-secret";
      at(c, "telegram").botToken = "999:other-secret";
      c.webhooks = { ci: { token: "hook-secret-123", tools: [] } };
    });
    const line = describeDiff(diff);
    expect(line).toContain("inbound.reply.agent.apiKey");
    expect(line).toContain("telegram.botToken");
    expect(line).toContain("webhooks.ci");
    for (const secret of ["sk-very-secret", "other-secret", "secret-token", "hook-secret-123"]) {
      expect(line).not.toContain(secret);
      expect(JSON.stringify(diff)).not.toContain(secret);
    }
  });
});
