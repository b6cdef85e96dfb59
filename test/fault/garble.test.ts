import { appendFile, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
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

const STORE_FAULTS = ["empty", "half", "garbage", "not-an-object", "missing-comma"] as const;
const TRANSCRIPT_FAULTS = ["cut-line", "garbage-line"] as const;
type Fault = (typeof STORE_FAULTS)[number] | (typeof TRANSCRIPT_FAULTS)[number];

/**
 * Garbling faults while sessions run (reliability review rows 15–17; issue 6 defect 4). Six clients run turns
 * back to back on six sessions; a fault loop breaks `sessions.json` (emptied, cut in half, garbage, a JSON value
 * that is not an object, one comma missing; saved in place or by rename) or a transcript (a line cut short, as a
 * crash mid-append leaves it, or a garbage line; only while that session is between turns, as a person editing
 * would). After each store fault it waits for the gateway's next write of the store. Every `sessions.json` the
 * scenario reads that is not its own damage must be a non-empty object with every key on its first sessionId.
 * Asserts: no key changes its sessionId, no empty or partial store ever written, no extra session started, every
 * transcript keeps its header, and 0 lost, 0 twice, 0 torn (apart from the lines the faults wrote).
 */
describe("fault: garbled store and transcript lines while sessions run", () => {
  afterAll(cleanupAll);

  it(
    "no key changes its sessionId and no empty store is ever written",
    async () => {
      const random = scenarioRandom("garble");
      const faults = budget(24, 60);
      const state = await faultState();
      const ledger = new Ledger();
      const gw = await state.startGateway();
      const keys = ["main", "g1", "g2", "g3", "g4", "g5"];
      for (const key of keys) await sendApi(gw, ledger, ledger.mint("api", key));
      const firstIds = new Map<string, string>();
      const initial = JSON.parse(await readFile(state.storePath, "utf8")) as Record<
        string,
        { sessionId: string }
      >;
      for (const key of keys) firstIds.set(key, initial[key]?.sessionId ?? "");

      // What the scenario wrote into sessions.json itself; a read of it (or of part of it) is not checked.
      const injected: string[] = [];
      const problems: string[] = [];
      let reads = 0;
      const check = (text: string, when: string) => {
        reads++;
        if (injected.some((mine) => mine.startsWith(text))) return;
        let map: unknown;
        try {
          map = JSON.parse(text);
        } catch {
          problems.push(
            `${when}: the gateway left a store that does not parse: ${JSON.stringify(text.slice(0, 120))}`,
          );
          return;
        }
        if (typeof map !== "object" || map === null || Array.isArray(map)) {
          problems.push(`${when}: the store is not an object: ${text.slice(0, 80)}`);
          return;
        }
        const entries = map as Record<string, { sessionId?: string }>;
        for (const [key, id] of firstIds) {
          const now = entries[key]?.sessionId;
          if (now !== id) problems.push(`${when}: ${key} is on ${now ?? "(missing)"} instead of ${id}`);
        }
      };

      // Transcript faults wait for their session's turn gap: the loop of that key applies them between turns.
      const transcriptFaults = new Map<string, { fault: Fault; applied: () => void }[]>();
      const between = async (key: string) => {
        const queue = transcriptFaults.get(key) ?? [];
        for (const item of queue.splice(0)) {
          const path = state.transcriptPath(firstIds.get(key) ?? "");
          if (item.fault === "cut-line") {
            const lines = (await readFile(path, "utf8")).split("\n").filter(Boolean);
            const last = lines.at(-1) ?? '{"type":"message"}';
            const cut = last.slice(0, Math.max(1, Math.floor(last.length / 2)));
            ledger.injectedLines.add(cut);
            await appendFile(path, cut);
          } else {
            const line = `garbage ${random.int(0, 1e9)} {{{ not json`;
            ledger.injectedLines.add(line);
            await appendFile(path, `${line}\n`);
          }
          item.applied();
        }
      };

      const watch = new StoreWatch(state.storePath);
      let sending = true;
      const loops = keys.map((key) =>
        apiLoop(gw, { ledger, random, fake: state.fake, keys: [key], between }, () => sending),
      );
      const tally = new Map<Fault, number>();
      try {
        for (let i = 0; i < faults; i++) {
          const fault: Fault = random.chance(0.7)
            ? random.pick(STORE_FAULTS)
            : random.pick(TRANSCRIPT_FAULTS);
          tally.set(fault, (tally.get(fault) ?? 0) + 1);
          if ((TRANSCRIPT_FAULTS as readonly string[]).includes(fault)) {
            const key = random.pick(keys);
            // Applied before this key's next message; the message after it shows the session carried on.
            const applied = new Promise<void>((done) => {
              transcriptFaults.set(key, [...(transcriptFaults.get(key) ?? []), { fault, applied: done }]);
            });
            // A loop that stopped (its message was refused or never answered) applies nothing: the audit says why.
            const stopped = await Promise.race([
              applied.then(() => false),
              loops[keys.indexOf(key)]!.then(() => true),
            ]);
            if (stopped) problems.push(`fault ${i} (${fault}): the client of ${key} had stopped`);
            continue;
          }
          const current = await readFile(state.storePath, "utf8");
          check(current, `before fault ${i}`);
          const bad = damage(fault, current, random.int(0, 1e9));
          injected.push(bad);
          if (random.chance(0.5)) {
            await writeFile(state.storePath, bad);
          } else {
            await writeFile(`${state.storePath}.edit~`, bad);
            await rename(`${state.storePath}.edit~`, state.storePath);
          }
          const ino = await watch.inode();
          if ((await watch.nextWrite(ino)) === "late")
            problems.push(`fault ${i} (${fault}): no store write after it`);
          check(await readFile(state.storePath, "utf8"), `after fault ${i} (${fault})`);
        }
      } finally {
        sending = false;
        for (const queue of transcriptFaults.values()) for (const item of queue.splice(0)) item.applied();
        await Promise.all(loops);
        watch.close();
      }
      check(await readFile(state.storePath, "utf8"), "at the end");
      await gw.stop();

      const files = (await readdir(sessionsDir(state))).filter((f) => f.endsWith(".jsonl"));
      const headless: string[] = [];
      for (const file of files) {
        const first = (await readFile(join(sessionsDir(state), file), "utf8")).split("\n")[0] ?? "";
        try {
          if ((JSON.parse(first) as { type?: string }).type !== "session") headless.push(file);
        } catch {
          headless.push(file);
        }
      }
      const audit = await ledger.audit(sessionsDir(state));
      console.log(describeAudit(`garble (${faults} faults)`, audit));
      console.log(
        `[fault] garble: ${[...tally].map(([f, n]) => `${n} ${f}`).join(", ")}; ${reads} store reads checked; ${(await watch.setAside()).length} set aside; ${files.length} transcripts for ${keys.length} keys`,
      );
      expect.soft(problems, "what the gateway wrote into sessions.json").toEqual([]);
      expect.soft(files.length, "transcripts: one per key, no session started anew").toBe(keys.length);
      expect.soft(headless, "transcripts whose first line is not the header").toEqual([]);
      expectNothingLost(audit);
    },
    scenarioTimeout(60_000, 600_000),
  );
});

/** The damaged content a fault writes in place of `current`. */
function damage(fault: Fault, current: string, salt: number): string {
  switch (fault) {
    case "empty":
      return "";
    case "half":
      return current.slice(0, Math.floor(current.length / 2));
    case "garbage":
      return `\u0000garbage ${salt} {{{ [[[ "unterminated`;
    case "not-an-object":
      return ["[]\n", "42\n", '"sessions"\n', "null\n"][salt % 4]!;
    case "missing-comma":
      return current.includes('",\n') ? current.replace('",\n', '"\n') : `${current}}`;
    default:
      throw new Error(`not a store fault: ${fault}`);
  }
}
