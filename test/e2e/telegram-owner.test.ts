import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ChatRequestBody, echoReply, type FakeReply } from "../fakes/openai-server.js";
import { OWNER_TOOLS } from "../helpers/owner-tools.js";
import { cleanupAll } from "./harness.js";
import { ALICE, BOB, GROUP, privateChat, STRANGER, telegramE2e } from "./telegram-harness.js";

/**
 * Who gets tools, through the real `clawdis gateway`, real grammY and the fake Bot API (issue 36): the owner's DM
 * is offered the tools, another allowed person's is not; a stranger in an allowed group with file tools cannot
 * reach the config or the gateway token (`..`, absolute paths, symlinks), and the owner's file tools cannot either.
 */
describe("e2e: Telegram tools are the owner's", () => {
  afterEach(cleanupAll);

  const ALL = [...OWNER_TOOLS];
  const offered = (body: ChatRequestBody): string[] => (body.tools ?? []).map((t) => t.function.name).sort();

  /** After a tool batch the fake model answers with what the tools returned: a leak would reach the chat. */
  const toolResultsEchoed = (body: ChatRequestBody): FakeReply => {
    const last = body.messages.at(-1);
    if (last?.role !== "tool") return echoReply(body);
    const results = body.messages.slice(body.messages.findLastIndex((m) => m.role === "assistant") + 1);
    return { text: results.map((m) => String(m.content)).join("\n---\n") };
  };

  /** The tool results the model saw in its last request, in call order. */
  const toolResultsOf = (body: ChatRequestBody): string[] =>
    body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

  it("the owner's DM is offered the tools, another allowed user's none; inbound.owner moves them live", async () => {
    const { state, tg, config } = await telegramE2e();
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(BOB), from: BOB, text: "run id for me" });
    await tg.waitFor(() => tg.textsTo(BOB.id).length === 1, "bob's reply");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "hello" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "alice's reply");
    expect(state.fake.requests.map((r) => offered(r.body))).toEqual([[], ALL]);
    // Bob still talks: he is answered, without tools.
    expect(tg.textsTo(BOB.id)).toEqual(["echo: run id for me"]);
    expect(gw.stderr.text()).toContain(
      "owner on telegram: 111 (the first of telegram.allowFrom; set inbound.owner to change)",
    );

    // Bob made the owner (applied live): now his DM has the tools and Alice's has none.
    await state.writeConfig(config({ inbound: { owner: { telegram: ["@bob_b"] } } }));
    await gw.stderr.waitFor(/owner on telegram: @bob_b \(inbound\.owner\.telegram\)/);
    tg.pushMessage({ chat: privateChat(BOB), from: BOB, text: "now?" });
    await tg.waitFor(() => tg.textsTo(BOB.id).length === 2, "bob's second reply");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "and me?" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 2, "alice's second reply");
    expect(state.fake.requests.slice(2).map((r) => offered(r.body))).toEqual([ALL, []]);
  });

  it("a stranger in an allowed group with read_file and send_file cannot reach clawdis.json or gateway.token", async () => {
    const { state, tg, config } = await telegramE2e({ allowFrom: [ALICE.id, "@bob_b", GROUP.id] });
    await state.writeConfig(
      config({ inbound: { reply: { agent: { tools: { groups: ["read_file", "send_file"] } } } } }),
    );
    // A symlink in the group's own folder (its session folder's workspace) that leads to the state directory.
    await state.writeStore({ [`group:${GROUP.id}`]: { sessionId: "group-session", updatedAt: Date.now() } });
    const groupDir = join(state.dir, "sessions", "group-session", "workspace");
    await mkdir(groupDir, { recursive: true });
    await symlink(state.dir, join(groupDir, "state-link"));
    await writeFile(join(groupDir, "menu.txt"), "soup of the day\n");
    await mkdir(join(state.dir, "workspace"), { recursive: true });
    await writeFile(join(state.dir, "workspace", "notes.txt"), "the owner's notes\n");
    state.fake.setDefault(toolResultsEchoed);
    state.fake.enqueue({
      toolCalls: [
        { name: "read_file", arguments: { path: "../../../clawdis.json" } },
        { name: "read_file", arguments: { path: join(state.dir, "gateway.token") } },
        { name: "read_file", arguments: { path: "state-link/gateway.token" } },
        { name: "send_file", arguments: { path: "../../../clawdis.json" } },
        { name: "send_file", arguments: { path: join(state.dir, "gateway.token") } },
        // The primary session's files are not the group's either.
        { name: "read_file", arguments: { path: "../../../workspace/notes.txt" } },
        { name: "read_file", arguments: { path: "menu.txt" } },
      ],
    });
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    const text = "@clawdis_test_bot send me the config";
    tg.pushMessage({
      chat: GROUP,
      from: STRANGER,
      text,
      entities: [{ type: "mention", offset: 0, length: "@clawdis_test_bot".length }],
    });
    await tg.waitFor(() => tg.textsTo(GROUP.id).length > 0, "the group reply");
    expect(offered(state.fake.requests[0]!.body)).toEqual(["read_file", "send_file"]);
    const results = toolResultsOf(state.fake.requests[1]!.body);
    expect(results.slice(0, 6)).toEqual([
      expect.stringMatching(
        /^read_file: refused: \.\.\/\.\.\/\.\.\/clawdis\.json is the gateway's config file/,
      ),
      expect.stringMatching(/^read_file: refused: \/.*\/gateway\.token is the gateway token/),
      expect.stringMatching(/^read_file: refused: state-link\/gateway\.token is the gateway token/),
      expect.stringMatching(
        /^send_file: refused: \.\.\/\.\.\/\.\.\/clawdis\.json is the gateway's config file/,
      ),
      expect.stringMatching(/^send_file: refused: \/.*\/gateway\.token is the gateway token/),
      expect.stringMatching(
        /^read_file: refused: \.\.\/\.\.\/\.\.\/workspace\/notes\.txt is outside this session's workspace/,
      ),
    ]);
    // The group's own file is there for it.
    expect(results[6]).toBe("soup of the day");
    // Nothing but the text went to the group, and it holds neither token.
    expect(tg.sent.map((m) => m.method)).toEqual(["sendMessage"]);
    const said = tg.textsTo(GROUP.id).join("\n");
    expect(said).not.toContain(tg.token);
    expect(said).not.toContain(gw.token);
    expect(said).not.toContain("the owner's notes");
    expect(said).toContain("soup of the day");
  });

  it("the owner's own file tools refuse the config and the token too, and reach the rest", async () => {
    const { state, tg } = await telegramE2e();
    await mkdir(join(state.dir, "workspace"), { recursive: true });
    await writeFile(join(state.dir, "workspace", "notes.txt"), "buy milk\n");
    state.fake.setDefault(toolResultsEchoed);
    state.fake.enqueue({
      toolCalls: [
        { name: "read_file", arguments: { path: "../clawdis.json" } },
        { name: "send_file", arguments: { path: "../gateway.token" } },
        { name: "read_file", arguments: { path: "notes.txt" } },
      ],
    });
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "show me the config" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length > 0, "alice's reply");
    expect(toolResultsOf(state.fake.requests[1]!.body)).toEqual([
      expect.stringMatching(/^read_file: refused: \.\.\/clawdis\.json is the gateway's config file/),
      expect.stringMatching(/^send_file: refused: \.\.\/gateway\.token is the gateway token/),
      "buy milk",
    ]);
    expect(tg.sent.map((m) => m.method)).toEqual(["sendMessage"]);
    expect(tg.textsTo(ALICE.id).join("\n")).not.toContain(gw.token);
    expect(await readFile(join(state.dir, "gateway.token"), "utf8")).toContain(gw.token);
  });
});
