import { randomUUID } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll } from "../e2e/harness.js";
import { expectNothingLost } from "./expect-nothing-lost.js";
import { budget, scenarioTimeout } from "./fault-budget.js";
import { faultState, HOOKS, sessionsDir } from "./fault-state.js";
import { describeAudit, Ledger, type SentMessage } from "./ledger.js";
import { settle } from "./settle.js";
import { fillDisk, mountTmpfs, unmount } from "./tmpfs.js";
import { postHook, sendApi } from "./traffic.js";

/** The tmpfs the state dir lives on: room for the gateway's files, then a filler takes the rest. */
const TMPFS_BYTES = 8 * 1024 * 1024;
/** Texts this long fill a page of the journal or a transcript in a message or two. */
const BIG = "x".repeat(3000);

/**
 * A full disk (reliability review rows 26–27; issue 6 defects 7 and 8), on a small tmpfs holding the whole state
 * dir. With the disk full, webhooks (their own session and the primary one) and API messages arrive, each with a
 * message id. Each is either refused (not acknowledged: the caller must retry) or acknowledged (then owed an
 * answer). Space comes back: every retry of a refused message with the same id is accepted (never 409 duplicate),
 * every acknowledged one is answered without a restart, and a restart finds nothing open. The store stays
 * intact, and 0 lost, 0 twice, 0 torn.
 */
describe("fault: a full disk", () => {
  let base = "";
  let mount = "";
  afterAll(async () => {
    await cleanupAll();
    const keep = process.env.E2E_KEEP_STATE === "1";
    if (keep && mount) await cp(mount, join(base, "kept"), { recursive: true });
    if (mount) await unmount(mount);
    if (keep) console.log(`[fault] full disk: the tmpfs's content was copied to ${join(base, "kept")}`);
    else if (base) await rm(base, { recursive: true, force: true });
  });

  it(
    "refused input can be retried with its id, accepted input is answered once space is back",
    async () => {
      base = await mkdtemp(join(tmpdir(), "clawdis-fault-disk-"));
      const dir = join(base, "mnt");
      await mkdir(dir);
      await mountTmpfs(dir, TMPFS_BYTES);
      mount = dir;
      const state = await faultState({ dir: join(dir, "state") });
      const ledger = new Ledger();
      let gw = await state.startGateway();
      expect(await sendApi(gw, ledger, ledger.mint("api", "main"))).toBe("answered");

      const rounds = budget(1, 5);
      const refused: { message: SentMessage; messageId: string; via: "hook" | "api"; status: string }[] = [];
      const conflicts: string[] = [];
      let acceptedWhileFull = 0;
      for (let round = 0; round < rounds; round++) {
        const filler = join(dir, `filler-${round}`);
        await fillDisk(filler);
        const mark = gw.stderr.length;
        const sends: { message: SentMessage; messageId: string; via: "hook" | "api" }[] = [];
        for (let i = 0; i < 6; i++) {
          const hook = i % 2 === 0 ? HOOKS.ci : HOOKS.backup;
          sends.push({
            message: ledger.mint("webhook", hook.sessionKey, i < 2 ? "" : BIG),
            messageId: randomUUID(),
            via: "hook",
          });
        }
        for (let i = 0; i < 3; i++) {
          sends.push({ message: ledger.mint("api", "main", BIG), messageId: randomUUID(), via: "api" });
        }
        for (const send of sends) {
          const status = await sendOnce(send);
          if (send.message.acked) acceptedWhileFull++;
          else refused.push({ ...send, status });
        }
        // The gateway must say that it could not write (a full disk is never silent); then space comes back.
        await gw.stderr
          .waitFor(/ENOSPC|no space|disk is full/i, { from: mark, timeoutMs: 10_000 })
          .catch(() => {});
        await rm(filler);
      }

      for (const item of refused) {
        const status = await sendOnce(item);
        if (!item.message.acked)
          conflicts.push(`${item.message.marker} (${item.via}, first ${item.status}): retry got ${status}`);
      }
      const openWithoutRestart = await settle(gw, state);
      const beforeRestart = await ledger.audit(sessionsDir(state));
      expect.soft(await gw.stop(), "SIGTERM after the full disk").toEqual({ code: 0, signal: null });
      gw = await state.startGateway();
      const openAfterRestart = await settle(gw, state);
      await gw.stop();

      const store = JSON.parse(await readFile(state.storePath, "utf8")) as Record<string, unknown>;
      const audit = await ledger.audit(sessionsDir(state));
      console.log(describeAudit("full disk", audit));
      console.log(
        `[fault] full disk: ${acceptedWhileFull} accepted while full, ${refused.length} refused (${refused.map((r) => r.status).join(", ")}); ${beforeRestart.lost.length} unanswered before the restart`,
      );
      expect.soft(conflicts, "retries of refused messages with the same id").toEqual([]);
      expect.soft(openWithoutRestart, "records open once space was back (no restart)").toBe(0);
      expect
        .soft(beforeRestart.lost, "acknowledged and unanswered once space was back (no restart)")
        .toEqual([]);
      expect.soft(openAfterRestart, "records open after a restart (phantoms included)").toBe(0);
      expect.soft(Object.keys(store).sort(), "sessions.json keeps its keys").toEqual(["hooks:ci", "main"]);
      expectNothingLost(audit);

      /** Sends (or resends, same id) one message; acknowledges it in the ledger when accepted; returns the status. */
      async function sendOnce(send: {
        message: SentMessage;
        messageId: string;
        via: "hook" | "api";
      }): Promise<string> {
        if (send.via === "api") {
          const result = await sendApi(gw, ledger, send.message, {
            waitDone: false,
            messageId: send.messageId,
          });
          return result === "refused" ? (send.message.answer ?? result) : result;
        }
        const hook = send.message.sessionKey === HOOKS.ci.sessionKey ? HOOKS.ci : HOOKS.backup;
        const answer = await postHook(gw, hook, send.message.text, send.messageId);
        if (answer === "broken") return "broken";
        if (answer.status === 202)
          ledger.ack(send.message, (answer.body as { journalId?: string }).journalId);
        return String(answer.status);
      }
    },
    scenarioTimeout(90_000, 300_000),
  );
});
