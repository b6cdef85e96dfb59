import { tmpdir } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import type { ClawdisConfig } from "../../src/core/config-schema.js";
import { composeConfigSchema, sectionEntry } from "../../src/core/config-sections.js";
import { createMemoryLogger, type LogLine } from "../../src/core/logger.js";
import { HttpServer } from "../../src/http/http-server.js";
import type {
  InboundMessage,
  PluginContext,
  PluginInstance,
  ReceiveResult,
  TurnOutcome,
} from "../../src/plugin-api/index.js";
import { type WebhooksConfig, webhookConfigSection } from "./config.js";
import webhook from "./index.js";

const GATEWAY_TOKEN = "gateway-token-abcdef0123456789";
const HOOK_TOKEN = "ci-hook-token-42";

interface Harness {
  url: string;
  received: InboundMessage[];
  logLines: LogLine[];
  instance: PluginInstance;
  /** What the next `receive` answers; default: accepted with a turn that never ends. */
  answer: (message: InboundMessage) => Promise<ReceiveResult>;
}

let server: HttpServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(config: unknown): Promise<Harness> {
  // The config as the gateway composes it; the plugin's settings are its section, `webhooks`.
  const parsed = composeConfigSchema([sectionEntry("webhook", webhookConfigSection)]).parse(config);
  const gatewayConfig: ClawdisConfig = parsed;
  const hooks = parsed.webhooks as WebhooksConfig;
  const { logger, lines } = createMemoryLogger();
  server = new HttpServer({ token: GATEWAY_TOKEN, logger });
  const harness: Harness = {
    url: "",
    received: [],
    logLines: lines,
    instance: {},
    answer: async () => ({ status: "accepted", journalId: "j-1", done: new Promise<TurnOutcome>(() => {}) }),
  };
  const context: PluginContext<WebhooksConfig> = {
    id: "webhook",
    config: hooks,
    gatewayConfig,
    stateDir: tmpdir(),
    pluginStateDir: tmpdir(),
    stagingDir: tmpdir(),
    primarySessionKey: "main",
    logger,
    receive: (message) => {
      harness.received.push(message);
      return harness.answer(message);
    },
    onEvent: () => () => {},
    http: server,
    gatewayToken: GATEWAY_TOKEN,
    fail: (error) => {
      throw error;
    },
  };
  harness.instance = await webhook.create(context);
  const { port } = await server.listen(0, "127.0.0.1");
  harness.url = `http://127.0.0.1:${port}`;
  return harness;
}

const twoHooks = {
  webhooks: { ci: { session: "hooks:ci", token: HOOK_TOKEN }, cron: {} },
  inbound: { reply: { session: { mainKey: "primary" } } },
};

function post(url: string, body: string, headers: Record<string, string> = {}) {
  return fetch(url, { method: "POST", body, headers });
}

describe("POST /hooks/:name", () => {
  it("answers 404 for a hook that is not configured, and does not take Object's own keys for hooks", async () => {
    const h = await start(twoHooks);
    for (const name of ["nope", "constructor", "__proto__", "toString"]) {
      const res = await post(`${h.url}/hooks/${name}`, "hi", { authorization: `Bearer ${GATEWAY_TOKEN}` });
      expect(res.status, name).toBe(404);
    }
    expect(h.received).toEqual([]);
  });

  it("answers 401 without the hook's bearer token", async () => {
    const h = await start(twoHooks);
    const cases: [string, Record<string, string>][] = [
      ["no header", {}],
      ["wrong token", { authorization: "Bearer wrong-token" }],
      ["gateway token for a hook with its own", { authorization: `Bearer ${GATEWAY_TOKEN}` }],
      ["not a bearer", { authorization: `Basic ${HOOK_TOKEN}` }],
    ];
    for (const [name, headers] of cases) {
      const res = await post(`${h.url}/hooks/ci`, "hi", headers);
      expect(res.status, name).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
    }
    const inQuery = await post(`${h.url}/hooks/ci?token=${HOOK_TOKEN}`, "hi");
    expect(inQuery.status).toBe(401);
    expect(h.received).toEqual([]);
  });

  it("hands a JSON body to the gateway as automated input and answers 202 with the journal id", async () => {
    const h = await start(twoHooks);
    const before = Date.now();
    const res = await post(
      `${h.url}/hooks/ci`,
      JSON.stringify({ text: "build #12 failed", messageId: "evt-12" }),
      {
        authorization: `Bearer ${HOOK_TOKEN}`,
        "content-type": "application/json",
      },
    );
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: "accepted", journalId: "j-1" });
    expect(h.received).toHaveLength(1);
    const message = h.received[0]!;
    expect(message).toEqual({
      channel: "webhook",
      chatId: "hook:ci",
      chatType: "direct",
      senderId: "hook:ci",
      senderName: "ci",
      messageId: "evt-12",
      text: "build #12 failed",
      receivedAt: message.receivedAt,
      automated: true,
      allowedTools: [],
      sessionKey: "hooks:ci",
    });
    expect(message.receivedAt).toBeGreaterThanOrEqual(before);
    expect(message.receivedAt).toBeLessThanOrEqual(Date.now());
    expect(h.logLines.some((l) => l.message === "webhook input accepted" && l.fields?.hook === "ci")).toBe(
      true,
    );
  });

  it("takes a plain text body, the gateway token for a hook without its own, and the primary session", async () => {
    const h = await start(twoHooks);
    const res = await post(`${h.url}/hooks/cron`, "nightly backup done\n", {
      authorization: `Bearer ${GATEWAY_TOKEN}`,
      "content-type": "text/plain",
    });
    expect(res.status).toBe(202);
    const message = h.received[0]!;
    expect(message.text).toBe("nightly backup done");
    expect(message.sessionKey).toBe("primary");
    expect(message.senderId).toBe("hook:cron");
    expect(message.messageId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("grants a hook's input only the tools listed in webhooks.<name>.tools", async () => {
    const h = await start({ webhooks: { deploy: { tools: ["read_file"] } } });
    const res = await post(`${h.url}/hooks/deploy`, "deployed", { authorization: `Bearer ${GATEWAY_TOKEN}` });
    expect(res.status).toBe(202);
    expect(h.received[0]!.allowedTools).toEqual(["read_file"]);
  });

  it("gives each request without an id its own, and honours Idempotency-Key", async () => {
    const h = await start(twoHooks);
    const auth = { authorization: `Bearer ${GATEWAY_TOKEN}` };
    await post(`${h.url}/hooks/cron`, "one", auth);
    await post(`${h.url}/hooks/cron`, "two", auth);
    await post(`${h.url}/hooks/cron`, "three", { ...auth, "idempotency-key": "run-7" });
    const [one, two, three] = h.received.map((m) => m.messageId);
    expect(one).not.toBe(two);
    expect(three).toBe("run-7");
  });

  it("routes to the global session under scope global", async () => {
    const h = await start({ webhooks: { cron: {} }, inbound: { reply: { session: { scope: "global" } } } });
    await post(`${h.url}/hooks/cron`, "x", { authorization: `Bearer ${GATEWAY_TOKEN}` });
    expect(h.received[0]!.sessionKey).toBe("global");
  });

  it("answers 400 for a body it cannot use, without calling the gateway", async () => {
    const h = await start(twoHooks);
    const auth = { authorization: `Bearer ${HOOK_TOKEN}` };
    const bad = await post(`${h.url}/hooks/ci`, "{nope", { ...auth, "content-type": "application/json" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toBe("bad-request");
    expect((await post(`${h.url}/hooks/ci`, "   ", auth)).status).toBe(400);
    expect(h.received).toEqual([]);
  });

  it("answers 409 for a duplicate and 403 when the gateway denies", async () => {
    const h = await start(twoHooks);
    const auth = { authorization: `Bearer ${HOOK_TOKEN}`, "content-type": "application/json" };
    h.answer = async () => ({ status: "duplicate" });
    const dup = await post(`${h.url}/hooks/ci`, JSON.stringify({ text: "x", messageId: "evt-1" }), auth);
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as { error: string }).error).toBe("duplicate");
    h.answer = async () => ({ status: "denied", reason: "webhooks are paused" });
    const denied = await post(`${h.url}/hooks/ci`, JSON.stringify({ text: "x" }), auth);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toEqual({ error: "denied", message: "webhooks are paused" });
  });

  it("answers 503 when the gateway cannot take input", async () => {
    const h = await start(twoHooks);
    h.answer = () => Promise.reject(new Error("gateway is stopping"));
    const res = await post(`${h.url}/hooks/ci`, "x", { authorization: `Bearer ${HOOK_TOKEN}` });
    expect(res.status).toBe(503);
  });

  it("with ?wait=1 answers 200 with the turn's outcome once it is over", async () => {
    const h = await start(twoHooks);
    let finish: (outcome: TurnOutcome) => void = () => {};
    const done = new Promise<TurnOutcome>((resolve) => {
      finish = resolve;
    });
    let accepted: () => void = () => {};
    const wasAccepted = new Promise<void>((resolve) => {
      accepted = resolve;
    });
    h.answer = async () => {
      accepted();
      return { status: "accepted", journalId: "j-9", done };
    };
    const pending = post(`${h.url}/hooks/ci?wait=1`, "summarize the build log", {
      authorization: `Bearer ${HOOK_TOKEN}`,
    });
    await wasAccepted;
    finish({
      sessionKey: "hooks:ci",
      sessionId: "s-1",
      payloads: [{ text: "The build failed in step 3." }],
      stopReason: "end",
      model: "m",
      usage: { totalTokens: 10 },
      durationMs: 1234,
    });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      payloads: [{ text: "The build failed in step 3." }],
      meta: {
        durationMs: 1234,
        model: "m",
        usage: { totalTokens: 10 },
        stopReason: "end",
        sessionKey: "hooks:ci",
        sessionId: "s-1",
      },
    });
  });

  it("with ?wait=1 reports a failed turn like /api/agent does: null model and usage, the error", async () => {
    const h = await start(twoHooks);
    h.answer = async () => ({
      status: "accepted",
      journalId: "j-10",
      done: Promise.resolve<TurnOutcome>({
        sessionKey: "primary",
        sessionId: "s-2",
        payloads: [{ text: "No model is configured." }],
        stopReason: "error",
        durationMs: 3,
        error: "no model configured",
      }),
    });
    const res = await post(`${h.url}/hooks/cron?wait=1`, "x", { authorization: `Bearer ${GATEWAY_TOKEN}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      payloads: [{ text: "No model is configured." }],
      meta: {
        durationMs: 3,
        model: null,
        usage: null,
        stopReason: "error",
        sessionKey: "primary",
        sessionId: "s-2",
        error: "no model configured",
      },
    });
  });

  it("only registers POST: another method gets 405", async () => {
    const h = await start(twoHooks);
    const res = await fetch(`${h.url}/hooks/ci`, { headers: { authorization: `Bearer ${HOOK_TOKEN}` } });
    expect(res.status).toBe(405);
  });
});

describe("the webhook transport", () => {
  const base = (senderId: string): InboundMessage => ({
    channel: "webhook",
    chatId: senderId,
    chatType: "direct",
    senderId,
    messageId: "m",
    text: "x",
    receivedAt: 0,
  });

  it("allows exactly the configured hooks", async () => {
    const h = await start(twoHooks);
    const transport = h.instance.transport!;
    expect(transport.authorize(base("hook:ci"))).toEqual({ allowed: true });
    expect(transport.authorize(base("hook:cron"))).toEqual({ allowed: true });
    expect(transport.authorize(base("hook:other")).allowed).toBe(false);
    expect(transport.authorize(base("hook:constructor")).allowed).toBe(false);
    expect(transport.authorize(base("ci")).allowed).toBe(false);
    expect(transport.authorize({ ...base("hook:ci"), channel: "telegram" }).allowed).toBe(false);
    expect(transport.capabilities.maxTextLength).toBeGreaterThanOrEqual(100_000);
  });

  it("send delivers nowhere: it logs and resolves, and honours an aborted signal", async () => {
    const h = await start(twoHooks);
    const transport = h.instance.transport!;
    const message = { channel: "webhook", chatId: "hook:ci", text: "the reply", kind: "reply" as const };
    await expect(transport.send(message, new AbortController().signal)).resolves.toEqual({});
    const line = h.logLines.find((l) => l.message.startsWith("webhook reply kept"));
    expect(line?.level).toBe("info");
    expect(line?.fields).toMatchObject({ chatId: "hook:ci", kind: "reply", chars: 9 });
    await expect(transport.send(message, AbortSignal.abort())).rejects.toThrow();
    expect(transport.health?.()).toEqual({ state: "ok", detail: "hooks: ci, cron" });
  });
});
