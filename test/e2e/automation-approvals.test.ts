import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { markerReply } from "../fakes/openai-server.js";
import { settle } from "../fault/settle.js";
import { cleanupAll } from "./harness.js";
import { ALICE, privateChat, telegramE2e } from "./telegram-harness.js";

/**
 * Approvals apply to automated turns too (docs/tools.md, "Who starts a turn"), through the real binary: a
 * webhook's turn that asks for a risky bash parks, and the prompt goes to the owner's chat (where the owner last
 * wrote in the session), not to the webhook; the owner's /approve there runs it once.
 */
describe("e2e: an automated turn's approval is asked in the owner's chat", () => {
  afterEach(cleanupAll);

  const COMMAND = "echo ran >> runs.txt";

  it("a webhook's risky bash: the prompt reaches the owner on Telegram; /approve runs it once", async () => {
    const { state, tg, config } = await telegramE2e();
    await state.writeConfig(
      config({
        inbound: { reply: { agent: { approvals: "risky" } } },
        webhooks: { ci: { session: "main", tools: ["bash"] } },
      }),
    );
    state.fake.setDefault(markerReply);
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    // The owner (alice, the first of allowFrom) has written in the primary session.
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "hello" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the answer to hello");

    const hook = await gw.call("POST", "/hooks/ci", { text: `[[bash:${COMMAND}]]` });
    expect(hook.status).toBe(202);
    await tg.waitFor(
      () => tg.textsTo(ALICE.id).length === 2,
      "the webhook turn's prompt in the owner's chat",
    );
    expect(tg.textsTo(ALICE.id)[1]).toMatch(/^Approval needed: bash wants to run\necho ran >> runs\.txt\n/);
    const workspace = join(state.dir, "workspace");
    const runs = async () => {
      try {
        return (await readFile(join(workspace, "runs.txt"), "utf8")).split("\n").filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    expect(await runs()).toBe(0);

    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "/approve" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 3, "the approval's note in the owner's chat");
    expect(tg.textsTo(ALICE.id)[2]).toBe("Approved: bash runs now.");
    // The resumed webhook turn answers where webhook answers go (kept in the transcript), not in the owner's chat.
    await gw.stderr.waitFor(/webhook reply kept in the transcript/);
    expect(await runs()).toBe(1);
    expect(tg.textsTo(ALICE.id)).toHaveLength(3);
    await gw.stop();
  });

  it("the owner writes instead of answering: the waiting bash never runs, the webhook's turn ends, the owner is answered", async () => {
    const { state, tg, config } = await telegramE2e();
    await state.writeConfig(
      config({
        inbound: { reply: { agent: { approvals: "risky" } } },
        webhooks: { ci: { session: "main", tools: ["bash"] } },
      }),
    );
    state.fake.setDefault(markerReply);
    const gw = await state.startGateway();
    await tg.waitFor(() => tg.polling, "the first long poll");
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "hello" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 1, "the answer to hello");
    const hook = await gw.call("POST", "/hooks/ci", { text: `[[bash:${COMMAND}]]` });
    expect(hook.status).toBe(202);
    await tg.waitFor(
      () => tg.textsTo(ALICE.id).length === 2,
      "the webhook turn's prompt in the owner's chat",
    );

    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "never mind that" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).length === 4, "the note and the answer to alice's message");
    expect(tg.textsTo(ALICE.id).slice(2)).toEqual([
      expect.stringMatching(/^Not run: Alice.* wrote, so the automated turn stopped\.$/),
      expect.stringContaining("never mind that"),
    ]);
    await gw.stderr.waitFor(
      /automated turn ended after its tool batch: a person wrote .*source="resumed after an approval"/,
    );
    expect(await settle(gw, state), "open journal records once the gateway settled").toBe(0);
    // Alice's turn is the last model call; it carries the note; the webhook's turn made none after the refusal.
    const last = state.fake.requests.at(-1)?.body.messages ?? [];
    expect(last.some((m) => m.role === "user" && String(m.content).includes("stopped unfinished"))).toBe(
      true,
    );
    expect(String(last.at(-1)?.content)).toContain("never mind that");
    expect(state.fake.requests).toHaveLength(3);
    const workspace = join(state.dir, "workspace");
    await expect(readFile(join(workspace, "runs.txt"), "utf8")).rejects.toThrow(/ENOENT/);
    await gw.stop();
  });
});
