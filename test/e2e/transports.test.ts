import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupAll, contentOf, E2eState, type GatewayProcess } from "./harness.js";

async function readOrNull(path: string): Promise<string | null> {
  return readFile(path, "utf8").catch(() => null);
}

/**
 * A transport plugin loaded from `plugins.load` (test/fixtures/echo-plugin) in the real gateway: replies go back
 * to the chat each message came from, everyone's direct chats share `main`, and senders not allowed are ignored.
 */
describe("e2e: a transport plugin from plugins.load", () => {
  let state: E2eState;
  let gw: GatewayProcess;

  beforeAll(async () => {
    state = await E2eState.create({ allowFrom: ["alice", "bob"] });
    gw = await state.startGateway();
  });
  afterAll(cleanupAll);

  it("is started and reported ok by GET /api/status and `clawdis status --json`", async () => {
    const status = await gw.call<{ transports: { id: string; state: string }[] }>("GET", "/api/status");
    expect(status.status).toBe(200);
    expect(status.body.transports).toContainEqual(
      expect.objectContaining({ id: "echo-transport", state: "ok" }),
    );

    const cli = await state.cli(["status", "--json"]);
    expect(cli.code, cli.stderr).toBe(0);
    const report = JSON.parse(cli.stdout) as {
      gateway: { running: boolean; transports?: { id: string; state: string }[] };
    };
    expect(report.gateway.running).toBe(true);
    expect(report.gateway.transports).toContainEqual(
      expect.objectContaining({ id: "echo-transport", state: "ok" }),
    );
  });

  it("sends each reply to the chat its message came from; both chats are in main", async () => {
    const a = await gw.echo(
      { chatId: "chat-A", senderId: "alice", text: "hi from alice", messageId: "a-1" },
      { wait: true },
    );
    const b = await gw.echo(
      { chatId: "chat-B", senderId: "bob", text: "hi from bob", messageId: "b-1" },
      { wait: true },
    );
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.outcome).toMatchObject({ sessionKey: "main", stopReason: "end" });
    expect(b.body.outcome).toMatchObject({ sessionKey: "main", stopReason: "end" });

    const outbox = await gw.outbox();
    expect(
      outbox.map((o) => ({ chatId: o.chatId, text: o.text, kind: o.kind, replyTo: o.replyToMessageId })),
    ).toEqual([
      { chatId: "chat-A", text: "echo: hi from alice", kind: "reply", replyTo: "a-1" },
      // Two senders in main: the model is told who wrote each message (the echo shows what it was sent).
      { chatId: "chat-B", text: "echo: bob: hi from bob", kind: "reply", replyTo: "b-1" },
    ]);

    const store = await state.readStore();
    expect(Object.keys(store)).toEqual(["main"]);
    const messages = await state.messages(store.main?.sessionId ?? "");
    expect(messages.map((m) => [m.message.role, contentOf(m), m.meta?.chatId ?? null])).toEqual([
      ["user", "hi from alice", "chat-A"],
      ["assistant", "echo: hi from alice", "chat-A"],
      ["user", "hi from bob", "chat-B"],
      ["assistant", "echo: bob: hi from bob", "chat-B"],
    ]);
    expect(messages[2]?.meta).toMatchObject({ channel: "echo-transport", senderId: "bob", messageId: "b-1" });
  });

  it("ignores a sender who is not allowed: denied, no model call, nothing sent, nothing stored", async () => {
    // The store update of the previous test's turn follows its reply: snapshot the store once it is written.
    await gw.storeSettled();
    const requests = state.fake.requests.length;
    const outbox = (await gw.outbox()).length;
    const store = await readOrNull(state.storePath);
    const sessionId = (await state.readStore()).main?.sessionId ?? "";
    const transcript = await readOrNull(state.transcriptPath(sessionId));

    const answer = await gw.echo(
      { chatId: "chat-M", senderId: "mallory", text: "let me in", messageId: "m-1" },
      { wait: true },
    );
    expect(answer.status).toBe(403);
    expect(answer.body.status).toBe("denied");
    expect(String(answer.body.reason)).toContain("allowFrom");

    // The allowlist decides before the message is accepted: when the 403 is out, nothing else is pending.
    expect(state.fake.requests.length).toBe(requests);
    expect((await gw.outbox()).length).toBe(outbox);
    expect(await readOrNull(state.storePath)).toBe(store);
    expect(await readOrNull(state.transcriptPath(sessionId))).toBe(transcript);
    expect(gw.stderr.text()).toMatch(/not allowed/);
  });
});
