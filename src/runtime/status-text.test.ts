import { describe, expect, it } from "vitest";
import { NOT_RESTARTED } from "../host/plugin-host.js";
import type { ModelSnapshot } from "./model-probe.js";
import { type StatusInput, type TransportView, transportLine } from "./status-report.js";
import { hidePaths, sessionLine, statusText } from "./status-text.js";

const NOW = 1_000_000_000;
const STORE = "/home/me/.clawdis/sessions/sessions.json";
const BASE_URL = "http://10.0.0.5:11434/v1";

const model: ModelSnapshot = {
  configured: true,
  name: "qwen2.5:14b",
  source: "config",
  baseUrl: BASE_URL,
  endpointSource: "config",
  reachable: false,
  checkedAt: NOW - 5000,
  error: `could not reach ${BASE_URL} (connect ECONNREFUSED 10.0.0.5:11434): is the server up and the URL right?`,
};

const telegramDown: TransportView = {
  id: "telegram",
  state: "down",
  detail: NOT_RESTARTED,
  lastError:
    "Telegram says 401: Unauthorized — check telegram.botToken (from @BotFather; saving the file is enough)",
};
const whatsappDown: TransportView = {
  id: "whatsapp",
  state: "down",
  detail: NOT_RESTARTED,
  lastError: "WhatsApp is not linked — stop the gateway, run `clawdis login`, start it",
};
const webhookOff: TransportView = {
  id: "webhook",
  state: "disabled",
  detail: 'not configured (see the "webhooks" section)',
};
/** As the Telegram plugin's health() words it (plugins/telegram/health-line.test.ts pins that). */
const telegramOk: TransportView = {
  id: "telegram",
  state: "ok",
  detail:
    "@my_clawdis_bot; long polling; last poll 2s ago; privacy mode on: in groups it sees only commands, mentions and replies",
};

function input(over: Partial<StatusInput> = {}): StatusInput {
  return {
    version: "1.2.3",
    now: NOW,
    startedAt: NOW - 3 * 60_000,
    audience: "direct",
    sessionKey: "main",
    entry: undefined,
    storePath: STORE,
    contextWindow: 32_000,
    transports: [telegramDown, whatsappDown, webhookOff],
    model,
    busy: false,
    waiting: 0,
    config: {
      path: "/home/me/.clawdis/clawdis.json",
      sha256: null,
      appliedAt: NOW,
      deleted: { at: NOW - 60_000, ageMs: 60_000 },
    },
    ...over,
  };
}

/** The deepest nesting of parentheses in `line`. */
function depth(line: string): number {
  let level = 0;
  let most = 0;
  for (const c of line) {
    if (c === "(") most = Math.max(most, ++level);
    if (c === ")") level -= 1;
  }
  return most;
}

describe("transportLine: one short line per transport, why and what to do", () => {
  it.each([
    [
      "a fatal 401: the cause and the fix, not the host's 'not restarted'",
      telegramDown,
      "telegram down: Telegram says 401: Unauthorized — check telegram.botToken (from @BotFather; saving the file is enough)",
    ],
    [
      "WhatsApp not linked: stop, log in, start",
      whatsappDown,
      "whatsapp down: WhatsApp is not linked — stop the gateway, run `clawdis login`, start it",
    ],
    [
      "a failed plugin waiting for its restart: the error and when",
      { id: "echo", state: "down", detail: "restarting in 4s", lastError: "echo broke" },
      "echo down: echo broke · restarting in 4s",
    ],
    [
      "a plugin being stopped after a failure",
      { id: "echo", state: "down", detail: "failed; stopping it", lastError: "echo broke" },
      "echo down: echo broke",
    ],
    [
      "a running transport's own health is the truth, not an older error",
      { id: "telegram", state: "down", detail: "long polling; last poll 3m ago", lastError: "old" },
      "telegram down: long polling; last poll 3m ago",
    ],
    [
      "a disabled plugin without nested parentheses",
      webhookOff,
      'webhook disabled: not configured (see the "webhooks" section)',
    ],
    [
      "ok with the privacy note, short",
      telegramOk,
      "telegram ok: @my_clawdis_bot; long polling; last poll 2s ago; privacy mode on: in groups it sees only commands, mentions and replies",
    ],
    ["ok without detail", { id: "chat", state: "ok" }, "chat ok"],
  ] as const)("%s", (_name, transport, line) => {
    expect(transportLine(transport)).toBe(line);
  });
});

describe("statusText", () => {
  it("a direct chat: one line per transport, the store and the endpoint, nothing nested, phone-short lines", () => {
    const lines = statusText(input()).split("\n");
    expect(lines).toContain(transportLine(telegramDown));
    expect(lines).toContain(transportLine(whatsappDown));
    expect(lines).toContain(transportLine(webhookOff));
    expect(lines).toContain(`Store: ${STORE}`);
    expect(lines).toContain(
      "config: /home/me/.clawdis/clawdis.json was deleted 1m ago; running on the last good config",
    );
    expect(lines.find((l) => l.startsWith("Model: "))).toBe(
      `Model: qwen2.5:14b at ${BASE_URL} — unreachable: ${model.error}, checked 5s ago · model from config, endpoint from config`,
    );
    for (const line of lines) expect(depth(line), line).toBeLessThanOrEqual(1);
    for (const line of lines.filter((l) => !l.startsWith("Model: ")))
      expect(line.length, line).toBeLessThan(130);
  });

  it("a session's own model (/model) is shown first, the configured one beside it", () => {
    const lines = statusText(
      input({ entry: { sessionId: "s", updatedAt: NOW, modelOverride: "big-model" } }),
    ).split("\n");
    expect(lines.find((l) => l.startsWith("Model: "))).toMatch(
      /^Model: big-model for this session \(configured: qwen2\.5:14b\) at /,
    );
  });

  it("a group: no local path and no endpoint URL anywhere, the transports still say why", () => {
    const text = statusText(
      input({
        audience: "group",
        sessionKey: "group:-1001234",
        transports: [
          telegramDown,
          {
            id: "whatsapp",
            state: "down",
            detail: NOT_RESTARTED,
            lastError: "bad creds.json in /home/me/.clawdis/credentials/whatsapp",
          },
        ],
      }),
    );
    expect(text).not.toContain("/home/me");
    expect(text).not.toContain("Store:");
    expect(text).not.toContain("10.0.0.5");
    expect(text).not.toContain("http://");
    expect(text).toContain("config: the config file was deleted 1m ago; running on the last good config");
    expect(text).toContain(transportLine(telegramDown));
    expect(text).toContain("whatsapp down: bad creds.json in …");
    expect(text).toMatch(/^Model: qwen2\.5:14b — unreachable: could not reach the endpoint/m);
    expect(text).toContain("Session: group:-1001234 · not loaded, no messages yet");
  });

  it("no model: says what to set and that saving the file is enough (an env variable needs a restart)", () => {
    const text = statusText(input({ model: { ...model, configured: false, name: undefined } }));
    expect(text).toContain(
      `Model: not configured — set inbound.reply.agent.model in the config file and save it, or OPENAI_MODEL and restart · endpoint ${BASE_URL}, from config`,
    );
    const group = statusText(input({ audience: "group", model: { ...model, configured: false } }));
    expect(group).not.toContain(BASE_URL);
  });

  it("an in-process restart is said under the gateway's line; a rejected edit says what happens until a good save", () => {
    const lines = statusText(
      input({
        restarted: { at: NOW - 120_000, reason: "config change: gateway.port" },
        config: {
          path: "/x/clawdis.json",
          sha256: "ab",
          appliedAt: NOW,
          rejected: { at: NOW - 60_000, ageMs: 60_000, error: "e", summary: "gateway.port: too big" },
        },
      }),
    ).split("\n");
    expect(lines[1]).toBe("restarted 2m ago: config change: gateway.port");
    expect(lines[2]).toBe(
      "config: last edit rejected 1m ago: gateway.port: too big; running on the last good config until a good save",
    );
  });

  it("no transports", () => {
    expect(statusText(input({ transports: [] }))).toContain("Transports: none");
  });

  it("each running background job is a line with its age, its command on one line", () => {
    const lines = statusText(
      input({
        jobs: [
          { id: "j1", command: "make\n  test", ageMs: 125_000 },
          { id: "j2", command: "x".repeat(100), ageMs: 5_000 },
        ],
      }),
    ).split("\n");
    expect(lines.filter((l) => l.startsWith("Job "))).toEqual([
      "Job j1 running for 2m: make test",
      `Job j2 running for 5s: ${"x".repeat(77)}...`,
    ]);
  });
});

describe("sessionLine: the asker's session, with its phase", () => {
  const entry = { sessionId: "3f2a", updatedAt: NOW - 60_000, createdAt: NOW - 2 * 3_600_000 };
  it.each<[string, Parameters<typeof sessionLine>[0], string]>([
    [
      "a turn running",
      { sessionKey: "main", phase: "processing", entry, now: NOW },
      "Session: main · processing · id 3f2a · age 2h",
    ],
    [
      "compacting",
      { sessionKey: "main", phase: "compacting", entry, now: NOW },
      "Session: main · compacting · id 3f2a · age 2h",
    ],
    [
      "loaded, nothing running, no messages yet",
      { sessionKey: "group:-1", phase: "ready", entry: undefined, now: NOW },
      "Session: group:-1 · ready, no messages yet",
    ],
    [
      "not in memory",
      { sessionKey: "main", phase: undefined, entry, now: NOW },
      "Session: main · not loaded · id 3f2a · age 2h",
    ],
  ])("%s", (_what, input, line) => {
    expect(sessionLine(input)).toBe(line);
  });

  it("is a line of the /status text, after the context line", () => {
    const lines = statusText(input({ phase: "passivating", entry: { ...entry, contextTokens: 1000 } })).split(
      "\n",
    );
    const at = lines.indexOf("Session: main · passivating · id 3f2a · age 2h");
    expect(at).toBeGreaterThan(0);
    expect(lines[at - 1]).toMatch(/^Context: /);
  });

  it("the refused replies are said in one line (outbox-status.ts)", () => {
    const refused = {
      channel: "telegram",
      chatId: "42",
      kind: "reply" as const,
      at: NOW - 5 * 60_000,
      reason: "blocked",
    };
    expect(statusText(input({ undelivered: [refused] }))).toContain(
      "Not delivered: 1 reply refused by the chat — telegram chat 42, 5m ago: blocked",
    );
    expect(statusText(input())).not.toContain("Not delivered");
  });
});

describe("hidePaths", () => {
  it.each([
    ["in /home/me/.clawdis/x.json now", "in … now"],
    ["see ~/.clawdis/clawdis.json", "see …"],
    ["http://127.0.0.1:11434/v1/models stays", "http://127.0.0.1:11434/v1/models stays"],
    ["send /status or /new", "send /status or /new"],
    ["1.2k/32k tokens, meta-llama/Llama-3", "1.2k/32k tokens, meta-llama/Llama-3"],
  ])("%s", (text, out) => {
    expect(hidePaths(text)).toBe(out);
  });
});
