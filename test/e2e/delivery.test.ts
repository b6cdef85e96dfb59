import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, contentOf, E2eState, type GatewayProcess, type OutboxItem } from "./harness.js";

/**
 * Delivery never drops a reply (issue 7), through the real binary and the echo transport: a reply finished while
 * the transport is down waits and is sent once when it is back; a reply left open at a stop is sent after the
 * restart even though the transport is still starting then; input handed in while the transport starts is
 * accepted; the grown contract (typing from lifecycle events, attachments in, a reply context) works end to end.
 */
describe("e2e: delivery that waits for its transport", () => {
  afterEach(cleanupAll);

  const control = (gw: GatewayProcess, body: object) => gw.call("POST", "/echo/control", body);
  const openRecords = async (gw: GatewayProcess) =>
    (await gw.call<{ openJournalRecords: number }>("GET", "/api/status")).body.openJournalRecords;
  const textsTo = (outbox: OutboxItem[], chatId: string) =>
    outbox.filter((m) => m.chatId === chatId).map((m) => m.text);

  it("a reply finished while the transport is down is sent once, when it is back", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    await control(gw, { health: "down" });
    const accepted = await gw.echo({ chatId: "c1", senderId: "alice", text: "while down" }, { wait: true });
    expect(accepted.status).toBe(200);
    expect(await gw.outbox()).toEqual([]);
    expect(await openRecords(gw)).toBe(1);
    const status = await gw.echo({ chatId: "c1", senderId: "alice", text: "/status" }, { wait: true });
    expect(JSON.stringify(status.body)).toContain("Waiting to send: 1 reply for echo-transport");
    await control(gw, { health: "ok" });
    await expect.poll(async () => textsTo(await gw.outbox(), "c1")).toContain("echo: while down");
    await expect.poll(() => openRecords(gw)).toBe(0);
    expect(textsTo(await gw.outbox(), "c1").filter((t) => t === "echo: while down")).toHaveLength(1);
  });

  it("a reply still waiting at a stop is sent after the restart, once the starting transport is up", async () => {
    const state = await E2eState.create();
    const first = await state.startGateway();
    await control(first, { health: "down" });
    await first.echo({ chatId: "c2", senderId: "alice", text: "keep this" }, { wait: true });
    expect((await first.stop()).code).toBe(0);

    // The next start: the transport holds its start (still connecting) while the journal is replayed.
    await state.writeConfig(state.configFor({ config: { echo: { holdStart: true } } }));
    const second = await state.startGateway();
    expect(await second.outbox()).toEqual([]);
    expect(await openRecords(second)).toBe(1);
    await control(second, { releaseStart: true });
    await expect.poll(async () => textsTo(await second.outbox(), "c2")).toEqual(["echo: keep this"]);
    await expect.poll(() => openRecords(second)).toBe(0);
    expect(state.fake.requests).toHaveLength(1);
  });

  it("accepts what the transport hands in while it is still starting", async () => {
    const state = await E2eState.create({ config: { echo: { holdStart: true } } });
    const gw = await state.startGateway();
    const accepted = await gw.echo({ chatId: "c3", senderId: "alice", text: "from the backlog" });
    expect(accepted).toEqual({ status: 202, body: { status: "accepted" } });
    await control(gw, { releaseStart: true });
    await expect.poll(async () => textsTo(await gw.outbox(), "c3")).toEqual(["echo: from the backlog"]);
  });

  it("runs the typing indicator from the turn lifecycle, and hands files and the quoted message to the agent", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    await gw.echo(
      {
        chatId: "c4",
        senderId: "alice",
        text: "what is in it?",
        replyTo: { messageId: "echo-out-7", text: "the earlier answer", fromAgent: true },
        files: [
          {
            fileName: "notes.txt",
            contentBase64: Buffer.from("buy milk").toString("base64"),
            mimeType: "text/plain",
          },
        ],
      },
      { wait: true },
    );
    expect((await gw.call("GET", "/echo/typing")).body).toEqual([
      { chatId: "c4", on: true },
      { chatId: "c4", on: false },
    ]);
    const entry = (await state.readStore()).main!;
    const user = (await state.messages(entry.sessionId)).find((m) => m.message.role === "user")!;
    const text = contentOf(user);
    expect(text).toMatch(
      /^\[In reply to your message: "the earlier answer"\]\nwhat is in it\?\n\[attachment 1: notes\.txt \(document, text\/plain, 8 B\); saved at inbox\/[0-9a-f]{8}-notes\.txt\]$/,
    );
    const saved = /saved at (\S+)\]/.exec(text)![1]!;
    expect(await readFile(`${state.dir}/workspace/${saved}`, "utf8")).toBe("buy milk");
    expect((await gw.outbox())[0]).toMatchObject({ chatId: "c4", chatType: "direct", kind: "reply" });
  });
});
