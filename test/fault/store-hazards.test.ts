import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupAll, type E2eState, type GatewayProcess } from "../e2e/harness.js";
import { budget } from "./fault-budget.js";
import { faultState, sessionsDir } from "./fault-state.js";
import { describeAudit, Ledger, type SentMessage } from "./ledger.js";
import { apiLoop } from "./load.js";
import { scenarioRandom } from "./seeded-random.js";
import { settle } from "./settle.js";
import { sendApi } from "./traffic.js";

type Store = Record<string, Record<string, unknown>>;

/**
 * Single-shot damage to the store directory while the gateway runs (reliability review rows 18, 19, 21, 22;
 * issue 6 defects 13 and 14), on one gateway: the whole `sessions/` directory deleted again and again during turns
 * (a reset: nothing breaks, every transcript comes back with its header); `sessions.json` replaced by a directory
 * (a clear answer, no wipe, and back to normal once the file is back); `sessionId`s hand-edited into paths (refused,
 * no file outside the store, the entry's other fields kept); a transcript replaced by a symlink to a file outside
 * the state dir (the outside file is never written).
 */
describe("fault: damage to the store directory while the gateway runs", () => {
  let state: E2eState;
  let gw: GatewayProcess;
  const ledger = new Ledger();
  /** Messages whose transcript lines cannot be in the store by design (the store was a directory, the transcript was
   * removed or made a symlink by the scenario): they are checked by their answers, and left out of the closing audit. */
  const unstored = new Ledger("u");
  beforeAll(async () => {
    state = await faultState();
    gw = await state.startGateway();
  });
  afterAll(async () => {
    const audit = await ledger.audit(sessionsDir(state));
    console.log(describeAudit("store hazards", audit));
    await cleanupAll();
    expect(audit.lost, "messages of the store hazards never answered in a transcript").toEqual([]);
    expect(audit.twice, "messages of the store hazards answered twice").toEqual([]);
  });

  /** One message; the problem, if it was not answered with a reply naming it. */
  async function ask(key: string, on = ledger): Promise<{ message: SentMessage; problem?: string }> {
    const message = on.mint("api", key);
    const result = await sendApi(gw, on, message);
    if (result === "answered" && message.answer?.includes(message.marker)) return { message };
    return {
      message,
      problem: `${message.marker} → ${key}: ${result}: ${JSON.stringify(message.answer ?? "")}`,
    };
  }

  async function readStore(): Promise<Store> {
    return JSON.parse(await readFile(state.storePath, "utf8")) as Store;
  }

  it("the sessions directory deleted again and again during turns: a reset, nothing fails", async () => {
    const random = scenarioRandom("delete-sessions-dir");
    // Its own ledger: the transcripts of these messages go with the directory, so the file's closing audit (which
    // reads transcripts) counts only the other scenarios' messages.
    const ledger = new Ledger("d");
    const deletions = budget(5, 20);
    const keys = ["d1", "d2", "d3", "d4"];
    // Transcripts go with the directory: what was answered is read from the live events instead.
    const events = await gw.events();
    let sending = true;
    const start = ledger.messages.length;
    const loops = keys.map((key) =>
      apiLoop(gw, { ledger, random, fake: state.fake, keys: [key] }, () => sending),
    );
    const allStopped = Promise.all(loops).then(() => "stopped" as const);
    for (let i = 0; i < deletions; i++) {
      // Paced on the turns: a few more answered messages between two deletions.
      const target = ledger.ackedCount + random.int(2, 6);
      while (ledger.ackedCount < target && gw.running) {
        const next = state.fake.waitForRequest(state.fake.requests.length + 1).then(() => "request" as const);
        if ((await Promise.race([next, allStopped])) === "stopped") break;
      }
      // The directory goes at once: renamed out of the state dir (atomic), then removed there. A recursive rm in place
      // races the gateway, which creates files in the tree while rm empties it (ENOTEMPTY however often it retries).
      const gone = `${state.dir}.gone-${i}`;
      const moved = await rename(sessionsDir(state), gone).then(
        () => true,
        (error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT") return false;
          throw error;
        },
      );
      if (moved) await rm(gone, { recursive: true, force: true });
    }
    sending = false;
    await Promise.all(loops);
    // Messages kept after a passing failure are answered a little later: wait until nothing is open.
    expect.soft(await settle(gw, state), "records still open").toBe(0);
    events.close();
    const replies = events.events
      .filter((e) => e.type === "message" && e.data.role === "assistant")
      .map((e) => String(e.data.text ?? ""));
    const sent = ledger.messages.slice(start);
    const failed = sent
      .filter((m) => m.acked && !replies.some((text) => text.includes(m.marker)))
      .map((m) => `${m.marker}: ${m.answer}`);
    expect(sent.length).toBeGreaterThan(deletions);
    expect.soft(failed, "messages never answered because the directory went away").toEqual([]);
    expect.soft((await ask("d1")).problem).toBeUndefined();
    const store = await readStore();
    for (const key of keys) {
      const id = store[key]?.sessionId;
      if (typeof id !== "string") continue;
      const first = (await readFile(state.transcriptPath(id), "utf8").catch(() => "")).split("\n")[0] ?? "";
      expect.soft(first, `the transcript of ${key} starts with its header`).toMatch(/^\{"type":"session"/);
    }
  });

  it("sessions.json replaced by a directory: a clear answer, no wipe, normal again once the file is back", async () => {
    expect((await ask("main")).problem).toBeUndefined();
    const before = await readStore();
    const saved = `${state.storePath}.saved`;
    await rename(state.storePath, saved);
    await mkdir(state.storePath);
    const during = unstored.mint("api", "main");
    const result = await sendApi(gw, unstored, during);
    expect.soft(result, "the message while sessions.json is a directory gets an answer").toBe("answered");
    expect.soft(gw.running, "the gateway stays up").toBe(true);
    await rm(state.storePath, { recursive: true });
    await rename(saved, state.storePath);
    expect.soft((await ask("main")).problem, "after the file is back").toBeUndefined();
    const after = await readStore();
    expect.soft(after.main?.sessionId, "the primary session kept its id").toBe(before.main?.sessionId);
  });

  it("sessionIds hand-edited into paths are refused: no file outside the store, the entry's other fields kept", async () => {
    const outsideAbs = join(dirname(state.dir), `clawdis-fault-outside-${process.pid}`);
    const bad = ["../../x", outsideAbs, "a\u0000b"];
    for (const [i, sessionId] of bad.entries()) {
      const key = `h${i}`;
      expect((await ask(key)).problem).toBeUndefined();
      const map = await readStore();
      map[key] = { ...map[key], sessionId, myField: `keep-${i}` };
      await writeFile(`${state.storePath}.edit~`, JSON.stringify(map, null, 2));
      await rename(`${state.storePath}.edit~`, state.storePath);
      const { problem } = await ask(key);
      expect
        .soft(problem, `a message to ${key} after its sessionId became ${JSON.stringify(sessionId)}`)
        .toBeUndefined();
      const entry = (await readStore())[key];
      expect.soft(entry?.sessionId, `${key} got a safe sessionId`).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
      expect.soft(entry?.myField, `${key} kept its other fields`).toBe(`keep-${i}`);
    }
    const escaped = [join(sessionsDir(state), "../../x.jsonl"), `${outsideAbs}.jsonl`, outsideAbs].filter(
      (p) => existsSync(p),
    );
    expect.soft(escaped, "files written outside the store directory").toEqual([]);
  });

  it("a transcript replaced by a symlink to a file outside the state dir: the outside file is never written", async () => {
    expect((await ask("s1", unstored)).problem).toBeUndefined();
    const id = (await readStore()).s1?.sessionId;
    expect(typeof id).toBe("string");
    const outside = join(dirname(state.dir), `clawdis-fault-outside-${process.pid}.txt`);
    await writeFile(outside, "not a transcript\n");
    try {
      const path = state.transcriptPath(String(id));
      await rm(path);
      await symlink(outside, path);
      const result = await sendApi(gw, unstored, unstored.mint("api", "s1"));
      expect.soft(["answered", "refused"], "the message gets an answer").toContain(result);
      expect.soft(await readFile(outside, "utf8"), "the outside file").toBe("not a transcript\n");
      expect.soft((await stat(outside)).size).toBe(17);
    } finally {
      await rm(outside, { force: true });
    }
  });
});
