import { readFile, rename, writeFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupAll } from "../e2e/harness.js";
import { expectNothingLost } from "./expect-nothing-lost.js";
import { budget, scenarioTimeout } from "./fault-budget.js";
import { faultState, sessionsDir } from "./fault-state.js";
import { describeAudit, Ledger } from "./ledger.js";
import { apiLoop } from "./load.js";
import { scenarioRandom } from "./seeded-random.js";
import { StoreWatch } from "./store-watch.js";
import { sendApi } from "./traffic.js";

type Store = Record<string, Record<string, unknown>>;

/**
 * Hand edits of `sessions.json` under load (reliability review rows 12–14; issue 6 defect 10). Four clients run
 * turns back to back on four sessions while an edit loop adds one new field per edit to one key (a busy one or a
 * quiet one), saved like an editor does (temp file + rename) or in place (truncate + write). After each edit the
 * scenario waits for the gateway's next write of the store and checks that the edit is still there; at the end,
 * that every edit is. An in-place save the gateway read half-written is set aside by the spec's rule (the edit is
 * then in the `.bad-*` file): counted, not a revert. Asserts no edit reverted beyond the rename window's share (at
 * most 1 in 40, 3 in 300: see below), and 0 lost, 0 twice, 0 torn.
 */
describe("fault: hand edits of sessions.json under load", () => {
  afterAll(cleanupAll);

  for (const style of ["rename", "in-place"] as const) {
    it(
      `${style} saves: 0 edits reverted`,
      async () => {
        const random = scenarioRandom(`hand-edits-${style}`);
        const edits = budget(40, 300);
        const state = await faultState();
        const ledger = new Ledger();
        const gw = await state.startGateway();
        const busy = ["k1", "k2", "k3", "k4"];
        for (const key of [...busy, "quiet"]) await sendApi(gw, ledger, ledger.mint("api", key));
        const watch = new StoreWatch(state.storePath);
        let sending = true;
        const loops = busy.map((key) =>
          apiLoop(gw, { ledger, random, fake: state.fake, keys: [key] }, () => sending),
        );

        const reverted: string[] = [];
        const setAside: string[] = [];
        const noWrite: string[] = [];
        const kept = new Map<string, string[]>();
        try {
          for (let i = 0; i < edits; i++) {
            const key = random.chance(0.5) ? "k1" : "quiet";
            const field = `edit${i}`;
            const before = (await watch.setAside()).length;
            const map = JSON.parse(await readFile(state.storePath, "utf8")) as Store;
            const entry = map[key];
            if (!entry) throw new Error(`key ${key} is missing from sessions.json`);
            entry[field] = i;
            const text = `${JSON.stringify(map, null, 2)}\n`;
            if (style === "rename") {
              const tmp = `${state.storePath}.edit~`;
              await writeFile(tmp, text);
              await rename(tmp, state.storePath);
            } else {
              await writeFile(state.storePath, text);
            }
            kept.set(key, [...(kept.get(key) ?? []), field]);
            const written = await watch.nextWrite(await watch.inode());
            if (written === "late") noWrite.push(field);
            const now = JSON.parse(await readFile(state.storePath, "utf8")) as Store;
            if (now[key]?.[field] === undefined) {
              if ((await watch.setAside()).length > before) setAside.push(`${key}.${field}`);
              else reverted.push(`${key}.${field} (after the next write)`);
              kept.set(
                key,
                (kept.get(key) ?? []).filter((f) => f !== field),
              );
            }
          }
        } finally {
          sending = false;
          await Promise.all(loops);
          watch.close();
        }
        // Later writes must not revert what survived the first one.
        const final = JSON.parse(await readFile(state.storePath, "utf8")) as Store;
        for (const [key, fields] of kept) {
          for (const field of fields)
            if (final[key]?.[field] === undefined) reverted.push(`${key}.${field} (at the end)`);
        }
        await gw.stop();
        const audit = await ledger.audit(sessionsDir(state));
        console.log(describeAudit(`hand edits (${style})`, audit));
        console.log(
          `[fault] hand edits (${style}): ${edits} edits, ${reverted.length} reverted, ${setAside.length} set aside as half-written, ${noWrite.length} without a gateway write after them, ${audit.acked} turns`,
        );
        // The one window no atomic rename can close (docs/files.md): a save that lands in the microseconds between
        // the gateway's last synchronous check and its rename. Measured at about 1 edit in 1,300 under this load
        // (four busy sessions; ~100 store writes/s), so 2 in 40 edits happens about once in 2,000 runs; an update
        // that writes over edits saved while it runs (issue 6 defect 10: a window of the whole update, about half of
        // the time under this load) reverts about half of them and fails here at once.
        const windowLosses = Math.max(1, Math.floor(edits / 100));
        expect
          .soft(reverted.length, `edits the gateway wrote over: ${reverted.join(", ")}`)
          .toBeLessThanOrEqual(windowLosses);
        expect
          .soft(noWrite, "edits after which the gateway never wrote the store (the load stopped)")
          .toEqual([]);
        expectNothingLost(audit);
      },
      scenarioTimeout(60_000, 600_000),
    );
  }
});
