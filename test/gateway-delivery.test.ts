import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { sendFileTool } from "../src/agent/tools/send-file.js";
import { PARK_POLL_MS } from "../src/runtime/outbox-waits.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai-server.js";
import { done, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { waitWithDeadline } from "./helpers/wait-deadline.js";

/**
 * Delivery never drops a reply (issue 7): a reply finished while its transport is down waits, record open, and
 * is sent once when it is back (also after a restart); input from a transport still starting is accepted;
 * split replies remember which parts reached the chat.
 */
describe("gateway: delivery that parks replies while a transport is down", () => {
  let t: TestGateway | undefined;
  let stateDir: string | undefined;
  let fake: FakeOpenAI | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
    if (fake) await fake.close();
    fake = undefined;
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
    stateDir = undefined;
  });

  it("a reply finished while the transport is down is sent once, in order, when it is back", async () => {
    t = await startTestGateway();
    t.chat.down = true;
    await done(await t.chat.inject({ text: "one" }));
    await done(await t.chat.inject({ text: "two" }));
    expect(t.chat.sent).toEqual([]);
    expect(t.gateway.journal.openCount()).toBe(2);
    expect(await t.gateway.statusText("main")).toMatch(/Waiting to send: 2 replies for chat/);
    t.chat.down = false;
    t.clock.advance(PARK_POLL_MS);
    await t.chat.waitForSent(2);
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: one", "echo: two"]);
    await expect.poll(() => t!.gateway.journal.openCount()).toBe(0);
    t.clock.advance(PARK_POLL_MS * 10);
    expect(t.chat.sent).toHaveLength(2);
  });

  it("a reply parked at a stop is delivered after the restart, without a new model call", async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-park-"));
    fake = await startFakeOpenAI();
    const first = await startTestGateway({ stateDir, fake });
    first.chat.down = true;
    await done(await first.chat.inject({ text: "keep me" }));
    expect(first.chat.sent).toEqual([]);
    await first.close();
    // The next start: the transport is down at first; the replayed reply waits for it too.
    t = await startTestGateway({ stateDir, fake, chat: (chat) => (chat.down = true) });
    expect(t.chat.sent).toEqual([]);
    expect(t.gateway.journal.openCount()).toBe(1);
    t.chat.down = false;
    t.clock.advance(PARK_POLL_MS);
    await t.chat.waitForSent(1);
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: keep me"]);
    expect(fake.requests).toHaveLength(1);
  });

  it("accepts input from a transport that is still starting (an offline backlog)", async () => {
    let ready!: () => void;
    const gate = new Promise<void>((r) => {
      ready = r;
    });
    t = await startTestGateway({ waitForStart: false, chat: (chat) => (chat.startGate = gate) });
    await expect.poll(() => t!.chat.context !== undefined).toBe(true);
    const result = await t.chat.inject({ text: "from the backlog" });
    expect(result.status).toBe("accepted");
    ready();
    await t.started;
    await t.chat.waitForSent(1);
    expect(t.chat.textsTo("c-alice")).toEqual(["echo: from the backlog"]);
  });

  it("a split reply cut by a restart sends only the parts that did not reach the chat", async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-parts-"));
    fake = await startFakeOpenAI();
    const long = Array.from({ length: 30 }, (_, i) => `sentence number ${i} of a long answer.`).join(" ");
    fake.enqueue({ text: long });
    // The chat takes two parts, then goes away (and the gateway stops before it is back).
    const first = await startTestGateway({
      stateDir,
      fake,
      chat: (chat) => {
        chat.maxTextLength = 200;
        chat.failAfter = 2;
      },
    });
    await done(await first.chat.inject({ text: "tell me a lot" }));
    await first.chat.waitForSent(2);
    const firstParts = first.chat.textsTo("c-alice");
    await first.close();

    t = await startTestGateway({ stateDir, fake, chat: (chat) => (chat.maxTextLength = 200) });
    await expect.poll(() => t!.gateway.journal.openCount()).toBe(0);
    const rest = t.chat.textsTo("c-alice");
    expect(firstParts).toHaveLength(2);
    expect(rest.length).toBeGreaterThan(0);
    // Every part reached the chat exactly once, across the two runs, in order.
    expect([...firstParts, ...rest].join(" ")).toBe(long);
    expect(fake.requests).toHaveLength(1);
  });

  it("a file the agent attaches is sent after the reply's text, or named in its text when the transport cannot", async () => {
    t = await startTestGateway({ tools: [sendFileTool()] });
    await mkdir(join(t.stateDir, "workspace"), { recursive: true });
    await writeFile(join(t.stateDir, "workspace", "report.txt"), "numbers");
    const sendIt = {
      toolCalls: [{ name: "send_file", arguments: { path: "report.txt", caption: "the numbers" } }],
    };
    t.fake.enqueue(sendIt, { text: "here it is" });
    t.chat.attachments = true;
    await done(await t.chat.inject({ text: "send me the report" }));
    // The text, then the file as a part of its own (a failed upload is retried without the text).
    await t.chat.waitForSent(2);
    expect(t.chat.sent[0]?.text).toBe("here it is");
    expect(t.chat.sent[0]?.attachments).toBeUndefined();
    expect(t.chat.sent[1]).toMatchObject({
      text: "",
      attachments: [{ kind: "document", fileName: "report.txt", caption: "the numbers" }],
    });
    // A copy of what was sent is kept in the session folder's artifacts/ (written behind the turn: waited for).
    const entry = await t.gateway.store.get("main");
    const artifacts = join(t.stateDir, "sessions", entry!.sessionId, "artifacts");
    const kept = await waitWithDeadline<string>(
      `a copy of report.txt in ${artifacts}`,
      undefined,
      (resolve) => {
        const timer = setInterval(() => {
          void readdir(artifacts).then(
            (names) => {
              const name = names.find((n) => n.endsWith("-report.txt"));
              if (name) resolve(join(artifacts, name));
            },
            () => {},
          );
        }, 20);
        return () => clearInterval(timer);
      },
    );
    expect(await readFile(kept, "utf8")).toBe("numbers");
    expect((await stat(kept)).mode & 0o777).toBe(0o600);
    expect((await stat(artifacts)).mode & 0o777).toBe(0o700);
    t.fake.enqueue(sendIt, { text: "again" });
    t.chat.attachments = false;
    await done(await t.chat.inject({ text: "once more" }));
    await t.chat.waitForSent(3);
    expect(t.chat.sent.at(-1)?.text).toBe("again\n\n[file: report.txt]");
    expect(t.chat.sent.at(-1)?.attachments).toBeUndefined();
  });
});
