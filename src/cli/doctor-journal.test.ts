import { mkdir, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { runDoctor } from "./doctor.js";
import { LARGE_JOURNAL_BYTES } from "./doctor-journal.js";
import { recordingIO } from "./io.js";

/** `clawdis doctor` looks at the journal too (issue 6, D5: a 587 MB journal crash-looped the gateway and doctor said "no problems"). */
describe("doctor: the journal", () => {
  let state: string;
  beforeEach(async () => {
    state = await mkdtemp(join(tmpdir(), "clawdis-doctor-journal-"));
    // As the gateway creates it (0700, the journal 0600): doctor reports wider modes as problems.
    await mkdir(join(state, "journal"), { recursive: true, mode: 0o700 });
  });
  afterEach(async () => {
    await rm(state, { recursive: true, force: true });
  });

  // The model endpoint doctor asks (no gateway runs here).
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await fake.close();
  });

  async function doctor(): Promise<{ code: number; out: string }> {
    const io = recordingIO({
      CLAWDIS_STATE_DIR: state,
      HOME: state,
      OPENAI_BASE_URL: fake.url,
      OPENAI_MODEL: "fake-model",
    });
    const code = await runDoctor({}, io);
    return { code, out: io.out };
  }

  const accept = (jid: string) =>
    JSON.stringify({
      op: "accept",
      jid,
      at: 1,
      msg: {
        channel: "x",
        chatId: "c",
        chatType: "direct",
        senderId: "s",
        messageId: jid,
        text: "t",
        receivedAt: 1,
      },
    });

  it("says how many messages wait unanswered, and counts lines that do not parse", async () => {
    await writeFile(
      join(state, "journal", "inbound.jsonl"),
      `${[accept("a"), accept("b"), JSON.stringify({ op: "end", jid: "a", at: 2, outcome: "replied" }), '{"op":"acc'].join("\n")}\n`,
      { mode: 0o600 },
    );
    const { code, out } = await doctor();
    expect(out).toMatch(/✓ journal .*inbound\.jsonl: 0\.0 MB, 1 message not answered yet/);
    expect(out).toContain("- journal: 1 line does not parse");
    expect(code).toBe(0);
  });

  it("counts a message a reply record ends (`ends`) as answered", async () => {
    const reply = JSON.stringify({
      op: "reply",
      at: 2,
      id: "r1",
      sessionKey: "main",
      sessionId: "s1",
      entries: [],
      ends: [{ jid: "a" }],
    });
    await writeFile(
      join(state, "journal", "inbound.jsonl"),
      `${[accept("a"), accept("b"), reply].join("\n")}\n`,
      {
        mode: 0o600,
      },
    );
    const { code, out } = await doctor();
    expect(out).toMatch(/✓ journal .*inbound\.jsonl: 0\.0 MB, 1 message not answered yet/);
    expect(code).toBe(0);
  });

  it("reports a journal that has grown too large as a problem", async () => {
    const handle = await open(join(state, "journal", "inbound.jsonl"), "w", 0o600);
    // Sparse: a file of zeros (no newline) past the limit, without writing it.
    await handle.truncate(LARGE_JOURNAL_BYTES + 1024);
    await handle.close();
    const { code, out } = await doctor();
    expect(out).toMatch(/✗ journal .* is 256\.0 MB: start the gateway/);
    expect(out).toContain("1 line does not parse");
    expect(code).toBe(1);
  });
});
