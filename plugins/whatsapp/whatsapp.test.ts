import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { proto, WASocket } from "@whiskeysockets/baileys";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/core/clock.js";
import type { DownloadTimers } from "../../src/plugin-api/index.js";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import {
  failSocket,
  linkUp,
  recordSockets,
  type SocketRecorder,
  writeLinkedCredentials,
} from "../../test/fakes/whatsapp-link.js";
import { startFakeMediaHost } from "../../test/fakes/whatsapp-media.js";
import { FakePeer, type PeerMessage } from "../../test/fakes/whatsapp-peer.js";
import { type FakeWhatsappServer, startFakeWhatsappServer } from "../../test/fakes/whatsapp-server.js";
import { startTestGateway, type TestGateway } from "../../test/helpers/gateway-harness.js";
import { credentialsDir } from "./auth-state.js";
import { createWhatsappPlugin } from "./index.js";

/**
 * The WhatsApp plugin in a real in-process gateway (real journal, store and transcripts, the fake model), with
 * real Baileys sockets pointed at a loopback server, and messages from fake peers through Baileys' real receive
 * path (signal-encrypted `<message>` nodes, decrypted by Baileys into a real `messages.upsert`).
 */

const ME = { phone: "15550001111", lid: "900000000000001" };
const ALICE = new FakePeer("4915112345678", "200000000000002");
const STRANGER = new FakePeer("4479460000000", "300000000000003");
const OWN_PHONE = new FakePeer(ME.phone, ME.lid, 0);
const GROUP = "120363000000000001@g.us";

let server: FakeWhatsappServer;
let fake: FakeOpenAI;
let stateDir: string;
let recorder: SocketRecorder;
let gw: TestGateway | undefined;
let sock: WASocket;

beforeEach(async () => {
  server = await startFakeWhatsappServer();
  fake = await startFakeOpenAI();
  stateDir = await mkdtemp(join(tmpdir(), "clawdis-wa-"));
  recorder = recordSockets();
  await writeLinkedCredentials(stateDir, ME.phone, ME.lid);
});

afterEach(async () => {
  await gw?.close();
  gw = undefined;
  await server.close();
  await fake.close();
  await rm(stateDir, { recursive: true, force: true });
});

async function start(
  options: {
    allowFrom?: string[];
    random?: () => number;
    requireMention?: boolean;
    mediaMaxMb?: number;
    timers?: DownloadTimers;
  } = {},
) {
  const before = recorder.sockets.items.length;
  gw = await startTestGateway({
    stateDir,
    fake,
    plugins: [
      createWhatsappPlugin({
        makeSocket: recorder.makeSocket,
        random: options.random ?? (() => 0),
        ...(options.timers ? { timers: options.timers } : {}),
      }),
    ],
    config: {
      whatsapp: { enabled: true, socketUrl: server.url, mediaMaxMb: options.mediaMaxMb ?? 20 },
      inbound: {
        allowFrom: options.allowFrom ?? ["+4915112345678"],
        groupChat: { mentionPatterns: ["\\bclawd\\b"], requireMention: options.requireMention ?? true },
      },
    },
  });
  sock = (await recorder.sockets.waitFor(before + 1))[before] as WASocket;
  await linkUp(sock);
  return gw;
}

const whatsapp = () => gw?.gateway.host.states().find((s) => s.id === "whatsapp");
let seq = 0;
const nextId = () => `3EB0${(++seq).toString(16).padStart(16, "0").toUpperCase()}`;

async function deliver(peer: FakePeer, message: Omit<PeerMessage, "id"> & { id?: string }, on = sock) {
  const id = message.id ?? nextId();
  await peer.deliver(on, on.authState.creds, { ...message, id });
  return id;
}

const text = (conversation: string): proto.IMessage => ({ conversation });

/** `promise`, or a rejection naming `what` after `ms`. */
function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
const sentTexts = () =>
  recorder.sent.items.map((s) => ({ jid: s.jid, text: (s.content as { text?: string }).text }));

describe("the WhatsApp transport, through Baileys' real receive path", () => {
  it("answers an allowed direct chat in the primary session: reply, read receipt, composing then paused", async () => {
    await start();
    expect(whatsapp()).toMatchObject({
      state: "ok",
      detail: expect.stringMatching(/^linked as \+15550001111, credentials refreshed/),
    });
    const id = await deliver(ALICE, { message: text("hello there"), pushName: "Alice" });
    const [reply] = await recorder.sent.waitFor(1);
    expect(reply).toMatchObject({
      jid: "4915112345678@s.whatsapp.net",
      content: { text: "echo: hello there" },
    });
    await gw?.idle();
    expect(recorder.read.items).toEqual([
      expect.objectContaining({ id, remoteJid: "4915112345678@s.whatsapp.net" }),
    ]);
    expect(recorder.presence.items.map((p) => p.kind)).toEqual(["composing", "paused"]);
    expect(recorder.presence.items.every((p) => p.jid === "4915112345678@s.whatsapp.net")).toBe(true);
    const transcript = await gw?.transcript("main");
    expect(transcript?.map((e) => e.message.content)).toEqual(["hello there", "echo: hello there"]);
  });

  it("stops composing when a turn ends in an error too", async () => {
    await start();
    fake.enqueue({ status: 500 }, { status: 500 }, { status: 500 });
    await deliver(ALICE, { message: text("this will fail") });
    await recorder.presence.waitFor(2);
    await gw?.idle();
    expect(recorder.presence.items.map((p) => p.kind)).toEqual(["composing", "paused"]);
  });

  it("costs a stranger nothing: no model call, no reply, no read receipt, no transcript", async () => {
    await start();
    await deliver(STRANGER, { message: text("let me in") });
    // Inbound messages are handled in order: once Alice's is answered, the stranger's was looked at.
    const aliceId = await deliver(ALICE, { message: text("after the stranger") });
    await recorder.sent.waitFor(1);
    await gw?.idle();
    expect(sentTexts()).toEqual([{ jid: "4915112345678@s.whatsapp.net", text: "echo: after the stranger" }]);
    expect(fake.requests).toHaveLength(1);
    expect(recorder.read.items.map((k) => k.id)).toEqual([aliceId]);
    expect((await gw?.transcript("main"))?.map((e) => e.message.content)).not.toContain("let me in");
  });

  it("maps a LID sender to its phone number, so the allowlist and the primary session still match", async () => {
    await start();
    await deliver(ALICE, { message: text("as a lid, with sender_pn"), asLid: { withPhone: true } });
    await deliver(ALICE, { message: text("as a lid, known mapping"), asLid: { withPhone: false } });
    await deliver(new FakePeer("4479460000001", "300000000000009"), {
      message: text("unknown lid"),
      asLid: { withPhone: false },
    });
    const marker = await deliver(ALICE, { message: text("last") });
    await recorder.sent.waitFor(3);
    await gw?.idle();
    expect(sentTexts().map((s) => s.text)).toEqual([
      "echo: as a lid, with sender_pn",
      "echo: as a lid, known mapping",
      "echo: last",
    ]);
    expect(recorder.read.items.at(-1)?.id).toBe(marker);
    expect((await gw?.transcript("main"))?.map((e) => e.message.content)).not.toContain("unknown lid");
  });

  it("allows only the account's own chat when inbound.allowFrom is empty, and never answers its own replies", async () => {
    await start({ allowFrom: [] });
    await deliver(ALICE, { message: text("not allowed now") });
    await deliver(OWN_PHONE, { message: text("note to self"), recipient: `${ME.phone}@s.whatsapp.net` });
    const [reply] = await recorder.sent.waitFor(1);
    expect(reply).toMatchObject({
      jid: `${ME.phone}@s.whatsapp.net`,
      content: { text: "echo: note to self" },
    });
    await gw?.idle();
    // WhatsApp shows the transport's own reply in the self-chat again: it is not input.
    await deliver(OWN_PHONE, {
      id: reply?.options?.messageId ?? "missing",
      message: text("echo: note to self"),
      recipient: `${ME.phone}@s.whatsapp.net`,
    });
    // The account's own message in someone else's chat is not input either.
    await deliver(OWN_PHONE, { message: text("me to alice"), recipient: "4915112345678@s.whatsapp.net" });
    await deliver(OWN_PHONE, { message: text("second note"), recipient: `${ME.phone}@s.whatsapp.net` });
    await recorder.sent.waitFor(2);
    await gw?.idle();
    expect(sentTexts().map((s) => s.text)).toEqual(["echo: note to self", "echo: second note"]);
    expect(fake.requests).toHaveLength(2);
  });

  it("answers a group only when addressed (mention, pattern, reply to the bot) and keeps the rest as context", async () => {
    await start();
    const bob = new FakePeer("33612345678", "400000000000004");
    await deliver(bob, { group: GROUP, message: text("just chatting"), pushName: "Bob" });
    await deliver(bob, {
      group: GROUP,
      pushName: "Bob",
      message: {
        extendedTextMessage: {
          text: "@15550001111 what did I say?",
          contextInfo: { mentionedJid: [`${ME.phone}@s.whatsapp.net`] },
        },
      },
    });
    const [first] = await recorder.sent.waitFor(1);
    expect(first?.jid).toBe(GROUP);
    await gw?.idle();
    const request = JSON.stringify(fake.requests[0]);
    expect(request).toContain("just chatting");
    await deliver(STRANGER, { group: GROUP, message: text("hey clawd, hi"), pushName: "Eve" });
    await recorder.sent.waitFor(2);
    await gw?.idle();
    await deliver(bob, {
      group: GROUP,
      message: {
        extendedTextMessage: {
          text: "and this?",
          contextInfo: {
            stanzaId: "BOTMSG1",
            participant: `${ME.phone}@s.whatsapp.net`,
            quotedMessage: { conversation: "an answer" },
          },
        },
      },
    });
    await recorder.sent.waitFor(3);
    await gw?.idle();
    expect(recorder.sent.items.map((s) => s.jid)).toEqual([GROUP, GROUP, GROUP]);
    const groupTranscript = (await gw?.transcript(`group:${GROUP}`))?.filter(
      (e) => e.message.role === "user",
    );
    expect(groupTranscript?.map((e) => e.message.content)).toEqual([
      "@15550001111 what did I say?",
      "hey clawd, hi",
      // A reply to the bot's own message: it addressed the bot.
      '[In reply to your message: "an answer"]\nand this?',
    ]);
    expect(await gw?.transcript("main")).toEqual([]);
    // In groups the reply quotes the message it answers.
    expect(recorder.sent.items[0]?.options?.quoted?.key?.remoteJid).toBe(GROUP);
  });

  it("takes text from extended text, captions, ephemeral and view-once wrappers; quoted replies give context", async () => {
    await start();
    await deliver(ALICE, {
      message: { ephemeralMessage: { message: { extendedTextMessage: { text: "disappearing" } } } },
    });
    await deliver(ALICE, { message: { viewOnceMessageV2: { message: { conversation: "once only" } } } });
    await deliver(ALICE, {
      message: {
        extendedTextMessage: {
          text: "what about it?",
          contextInfo: {
            stanzaId: "Q1",
            participant: "4915112345678@s.whatsapp.net",
            quotedMessage: { conversation: "the quoted thing" },
          },
        },
      },
    });
    await recorder.sent.waitFor(3);
    await gw?.idle();
    expect(sentTexts().map((s) => s.text)).toEqual([
      "echo: disappearing",
      "echo: once only",
      'echo: [In reply to +4915112345678: "the quoted thing"]\nwhat about it?',
    ]);
  });

  it("processes messages received while offline (append), and runs one turn for a message delivered three times", async () => {
    await start();
    const id = nextId();
    await deliver(ALICE, { id, message: text("from the backlog"), offline: true });
    await deliver(ALICE, { id, message: text("from the backlog"), offline: true });
    await deliver(ALICE, { id, message: text("from the backlog") });
    const barrier = await deliver(ALICE, { message: text("barrier") });
    await recorder.sent.waitFor(2);
    await gw?.idle();
    expect(sentTexts().map((s) => s.text)).toEqual(["echo: from the backlog", "echo: barrier"]);
    expect(fake.requests).toHaveLength(2);
    // After a restart (a fresh plugin instance, nothing in memory) the gateway's journal still knows the id.
    await gw?.close();
    gw = undefined;
    const restarted = await start();
    await deliver(ALICE, { id, message: text("from the backlog"), offline: true });
    const barrier2 = await deliver(ALICE, { message: text("barrier 2") });
    await recorder.sent.waitFor(3);
    await restarted.idle();
    // A read receipt goes out once per accepted message, not for a redelivery.
    expect(recorder.read.items.map((key) => key.id)).toEqual([id, barrier, barrier2]);
    expect(sentTexts().map((s) => s.text)).toEqual([
      "echo: from the backlog",
      "echo: barrier",
      "echo: barrier 2",
    ]);
  });

  it("downloads media into the session's workspace and describes it; a stranger's or a too large one is not fetched", async () => {
    const media = await startFakeMediaHost();
    try {
      await start({ mediaMaxMb: 0.01 });
      const picture = Buffer.alloc(2_000, 7);
      await deliver(STRANGER, { message: await media.imageMessage(picture, { caption: "from a stranger" }) });
      await deliver(ALICE, { message: await media.imageMessage(picture, { caption: "my cat" }) });
      await deliver(ALICE, {
        message: await media.imageMessage(Buffer.alloc(20_000, 1), { caption: "too big" }),
      });
      await recorder.sent.waitFor(2);
      await gw?.idle();
      expect(media.downloads).toBe(1);
      const prompts = fake.requests.map((r) => JSON.stringify(r.body));
      expect(prompts[0]).toMatch(
        /attachment 1: [^\]]*image\.png \(image, image\/png, [^)]*\), caption: \\"my cat\\"; saved at inbox\//,
      );
      expect(prompts[1]).toContain("not downloaded (larger than whatsapp.mediaMaxMb (0.01 MB))");
      const saved = /saved at (inbox\/[^\]]+)\]/.exec(prompts[0] ?? "")?.[1] ?? "";
      expect(await readFile(join(stateDir, "workspace", saved))).toEqual(picture);
    } finally {
      await media.close();
    }
  });

  it("a media download that trickles gives up at its deadline; the message is answered with the note", async () => {
    const media = await startFakeMediaHost();
    const clock = new ManualClock();
    try {
      await start({ timers: clock });
      await deliver(ALICE, {
        message: await media.imageMessage(Buffer.alloc(5_000, 3), { caption: "slow cat", trickleMs: 50 }),
      });
      const download = await within(media.waitForTrickle(1), "the download begun");
      // 10 s (on the manual clock) without 40 KB: too slow.
      clock.advance(10_000);
      expect(await within(download.ended, "the download closed")).toBe("aborted");
      await within(recorder.sent.waitFor(1), "the reply");
      await deliver(ALICE, { message: text("and now?") });
      await within(recorder.sent.waitFor(2), "the next reply");
      await gw?.idle();
      const prompts = fake.requests.map((r) => JSON.stringify(r.body));
      expect(prompts[0]).toContain(
        'caption: \\"slow cat\\"; not downloaded (timed out (slower than 4 KB/s for 10 s))',
      );
      expect(sentTexts().map((s) => s.text)).toEqual([expect.stringContaining("echo:"), "echo: and now?"]);
    } finally {
      await media.close();
    }
  });

  it("turns the model's Markdown into WhatsApp formatting", async () => {
    await start();
    fake.enqueue({ text: "**Done**: see ~~old~~ [docs](https://x.org)" });
    await deliver(ALICE, { message: text("format please") });
    const [reply] = await recorder.sent.waitFor(1);
    expect(reply?.content).toEqual({ text: "*Done*: see ~old~ docs (https://x.org)" });
  });

  it("says linked only while the socket is open; a dropped socket reconnects, and a reply made meanwhile waits for it", async () => {
    await start();
    fake.enqueue({ text: "late answer", hang: "before-headers" });
    await deliver(ALICE, { message: text("slow question") });
    await fake.waitForRequest(1);
    server.dropAll();
    await server.waitForConnections(2);
    expect(whatsapp()?.state).not.toBe("ok");
    const [, second] = (await recorder.sockets.waitFor(2)) as [WASocket, WASocket];
    const turnOver = new Promise<void>((resolve) =>
      gw?.gateway.onEvent((e) => e.type === "turn-end" && resolve()),
    );
    fake.release();
    await turnOver;
    expect(whatsapp()).toMatchObject({ state: "starting", detail: "connecting, attempt 2" });
    expect(recorder.sent.items).toEqual([]);
    await linkUp(second);
    // The gateway looks at a waiting transport again every second (its clock is the test's).
    gw?.clock.advance(1_000);
    const [reply] = await recorder.sent.waitFor(1);
    expect(reply).toMatchObject({ socket: 1, content: { text: "late answer" } });
    expect(whatsapp()?.state).toBe("ok");
    expect(server.open).toBe(1);
  });

  it("stops on 401 (logged out) with 'run clawdis login', and removes the credentials", async () => {
    await start();
    const down = new Promise<void>((resolve) =>
      gw?.gateway.host.onStateChange((s) => s.id === "whatsapp" && s.state === "down" && resolve()),
    );
    failSocket(sock, 401);
    await down;
    expect(whatsapp()?.lastError).toMatch(/logged this device out.*clawdis login/);
    expect(whatsapp()?.detail ?? "").not.toMatch(/restarting in/);
    await gw?.gateway.host.stop();
    await expect(stat(join(credentialsDir(stateDir), "creds.json"))).rejects.toThrow(/ENOENT/);
    expect(recorder.sockets.items).toHaveLength(1);
  });

  it("does not fight back when replaced by another session (440): one socket, down, not restarted", async () => {
    await start();
    const down = new Promise<void>((resolve) =>
      gw?.gateway.host.onStateChange((s) => s.id === "whatsapp" && s.state === "down" && resolve()),
    );
    failSocket(sock, 440);
    await down;
    expect(whatsapp()?.lastError).toMatch(/another client took over/);
    await gw?.gateway.host.stop();
    expect(recorder.sockets.items).toHaveLength(1);
    await stat(join(credentialsDir(stateDir), "creds.json"));
  });

  it("will not start without credentials, and says to run clawdis login", async () => {
    await rm(credentialsDir(stateDir), { recursive: true });
    gw = await startTestGateway({
      stateDir,
      fake,
      plugins: [createWhatsappPlugin({ makeSocket: recorder.makeSocket })],
      config: { whatsapp: { enabled: true, socketUrl: server.url } },
    });
    expect(whatsapp()).toMatchObject({
      state: "down",
      lastError: expect.stringMatching(/not linked.*clawdis login/),
    });
    expect(recorder.sockets.items).toHaveLength(0);
  });

  it("will not start on a corrupt creds.json, says which file and the fix, and leaves it as it was", async () => {
    await writeFile(join(credentialsDir(stateDir), "creds.json"), "{ not json");
    gw = await startTestGateway({
      stateDir,
      fake,
      plugins: [createWhatsappPlugin({ makeSocket: recorder.makeSocket })],
      config: { whatsapp: { enabled: true, socketUrl: server.url } },
    });
    expect(whatsapp()).toMatchObject({
      state: "down",
      lastError: expect.stringMatching(/creds\.json is not valid JSON.*clawdis logout.*clawdis login/),
    });
    expect(whatsapp()?.detail ?? "").not.toMatch(/restarting in/);
    expect(await readFile(join(credentialsDir(stateDir), "creds.json"), "utf8")).toBe("{ not json");
  });
});
