import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll } from "./harness.js";
import { ALICE, BOB, privateChat, telegramE2e } from "./telegram-harness.js";

/**
 * Telegram intake through the real `clawdis gateway`: a file that trickles fails alone, in bounded time, and its
 * message is still answered with the note; a webhook URL that is not https:// stops the start with exit 2.
 */
describe("e2e: Telegram intake under slow downloads and bad webhook config", () => {
  afterEach(cleanupAll);

  /** `promise`, or a rejection naming `what` after `ms`. */
  function within<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms);
    });
    return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
  }

  it("a trickling download does not silence the bot: another user is answered, the document times out with a note", async () => {
    const { state, tg } = await telegramE2e({ mediaTimeoutSeconds: 1 });
    await state.startGateway();
    await within(
      tg.waitFor(() => tg.polling, "the first long poll"),
      "the first long poll",
    );
    // One byte every 200 ms, 100 KB: about 5.5 hours if nothing gave up.
    tg.addTricklingFile("slow-1", "documents/slow.pdf", Buffer.alloc(100_000, 1), 200);
    tg.pushMessage({
      chat: privateChat(ALICE),
      from: ALICE,
      caption: "read this",
      document: { fileId: "slow-1", fileName: "slow.pdf", mimeType: "application/pdf", size: 100_000 },
    });
    await within(
      tg.waitFor(() => tg.trickles.length === 1, "the download begun"),
      "the download begun",
    );
    tg.pushMessage({ chat: privateChat(BOB), from: BOB, text: "anyone there?" });
    await within(
      tg.waitFor(() => tg.textsTo(BOB.id).length === 1, "bob's reply"),
      "bob's reply",
    );
    // Bob is labelled when Alice's message (handed in once her download timed out) is in main's context already.
    expect(tg.textsTo(BOB.id)).toHaveLength(1);
    expect(tg.textsTo(BOB.id)[0]).toMatch(/^echo: (Bob: )?anyone there\?$/);
    await within(
      tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "alice's reply"),
      "alice's reply",
    );
    expect(tg.trickles[0]!.ended).toBe("aborted");
    const prompts = state.fake.requests.map((r) => JSON.stringify(r.body.messages));
    const alices = prompts.find((p) => p.includes("read this"));
    expect(alices).toContain("slow.pdf");
    expect(alices).toContain("not downloaded: timed out (not done within 1 s)");
    // Nothing of the partial file is left behind, in the staging area or the workspace.
    const inbox = await readdir(join(state.dir, "workspace", "inbox")).catch(() => []);
    expect(inbox).toEqual([]);
  });

  it("an http:// telegram.webhookUrl: `clawdis gateway` exits 2 and names the key", async () => {
    const { state, config } = await telegramE2e();
    await state.writeConfig(
      config({
        telegram: { webhookUrl: "http://bot.example.org/telegram/webhook", webhookSecret: "s3cret" },
      }),
    );
    const run = await state.cli(["gateway"]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain("telegram.webhookUrl");
    expect(run.stderr).toContain("https://");
    expect(run.stderr).not.toMatch(/listening on/);
  });
});
