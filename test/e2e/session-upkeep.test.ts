import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SessionMap } from "../../src/sessions/types.js";
import { type AgentReply, cleanupAll, E2eState, type HttpAnswer } from "./harness.js";

/**
 * Sessions that look after themselves, through the real binary: the daily reset, `clawdis sessions cleanup`
 * (on the files, and `maintenance.mode: "enforce"` in the gateway).
 */

const DAY = 24 * 60 * 60 * 1000;

const ok = (answer: HttpAnswer<AgentReply>) => {
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
};

/** "HH:MM" (UTC) of the instant `ms`. */
function utcClock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 16);
}

/** A session of `key` last active `daysAgo` days ago, with a transcript and a session folder holding a file. */
async function oldSession(state: E2eState, key: string, sessionId: string, daysAgo: number) {
  const at = Date.now() - daysAgo * DAY;
  const header = {
    type: "session",
    version: 1,
    id: sessionId,
    sessionKey: key,
    createdAt: new Date(at).toISOString(),
  };
  await mkdir(join(state.dir, "sessions", sessionId, "artifacts"), { recursive: true });
  await writeFile(state.transcriptPath(sessionId), `${JSON.stringify(header)}\n`);
  await writeFile(join(state.dir, "sessions", sessionId, "artifacts", "kept.txt"), "a file of the session\n");
  return { sessionId, updatedAt: at, lastInteractionAt: at, createdAt: at };
}

afterAll(cleanupAll);

describe("e2e: the daily reset", () => {
  it("starts a new session on the first message after the reset hour passed, with a note, though idleMinutes has not", async () => {
    // The reset hour 10 minutes ago (UTC); the last exchange is made 20 minutes old: the hour passed in between.
    const state = await E2eState.create({
      config: {
        gateway: { timeZone: "UTC" },
        inbound: {
          reply: { session: { dailyResetAt: utcClock(Date.now() - 10 * 60_000), idleMinutes: 600 } },
        },
      },
    });
    const gw = await state.startGateway();
    const first = ok(await gw.agent("first"));
    // A message right after: the reset hour did not pass since the last exchange.
    expect(ok(await gw.agent("second")).meta.sessionId).toBe(first.meta.sessionId);
    await gw.storeSettled();
    const store = await state.readStore();
    const main = store.main;
    if (!main) throw new Error("no main session");
    const twentyMinutesAgo = Date.now() - 20 * 60_000;
    await state.writeStore({
      ...store,
      main: { ...main, lastInteractionAt: twentyMinutesAgo, updatedAt: twentyMinutesAgo },
    });

    const answer = await gw.echo(
      { chatId: "chat-daily", senderId: "alice", text: "good morning" },
      { wait: true },
    );
    expect(answer.status).toBe(200);
    const newId = (await state.readStore()).main?.sessionId;
    expect(newId).not.toBe(first.meta.sessionId);
    const sent = (await gw.outbox()).filter((o) => o.chatId === "chat-daily");
    expect(sent.map((o) => o.kind)).toEqual(["notice", "reply"]);
    expect(sent[0]?.text).toMatch(/daily reset at \d\d:\d\d/);
    expect(sent[1]?.text).toBe("echo: good morning");
    await gw.stop();
  });
});

describe("e2e: clawdis sessions cleanup", () => {
  it("--dry-run --json says what would go and changes nothing; then archives old non-primary sessions, never main", async () => {
    const state = await E2eState.create({
      config: { inbound: { reply: { session: { maintenance: { mode: "warn", pruneAfterDays: 30 } } } } },
    });
    const map: SessionMap = {
      main: await oldSession(state, "main", "id-main", 400),
      "group:old": await oldSession(state, "group:old", "id-old", 45),
      "my-notes": await oldSession(state, "my-notes", "id-notes", 31),
      "group:recent": await oldSession(state, "group:recent", "id-recent", 2),
    };
    await state.writeStore(map);

    // maintenance.mode warn: doctor reports what would go, and changes nothing.
    const doctor = await state.cli(["doctor"]);
    expect(doctor.stdout).toMatch(
      /session upkeep: 2 session\(s\) to prune to sessions\/archive\/: group:old \(no exchange for over 30 days\), my-notes/,
    );
    const dry = await state.cli(["sessions", "cleanup", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as {
      action: string;
      pruned: { key: string; done: string; reason: string }[];
    };
    expect(planned.action).toBe("dry-run");
    expect(planned.pruned.map((p) => [p.key, p.reason, p.done])).toEqual([
      ["group:old", "stale", "planned"],
      ["my-notes", "stale", "planned"],
    ]);
    expect(Object.keys(await state.readStore()).sort()).toEqual(Object.keys(map).sort());
    expect(existsSync(state.transcriptPath("id-old"))).toBe(true);

    const run = await state.cli(["sessions", "cleanup"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("pruned group:old");
    expect(Object.keys(await state.readStore()).sort()).toEqual(["group:recent", "main"]);
    const archive = join(state.dir, "sessions", "archive");
    for (const id of ["id-old", "id-notes"]) {
      expect(existsSync(state.transcriptPath(id))).toBe(false);
      expect(existsSync(join(archive, `${id}.jsonl`))).toBe(true);
      expect(existsSync(join(archive, id, "artifacts", "kept.txt"))).toBe(true);
    }
    expect(existsSync(state.transcriptPath("id-main"))).toBe(true);
    expect(existsSync(state.transcriptPath("id-recent"))).toBe(true);
  });

  it("--purge deletes the files instead", async () => {
    const state = await E2eState.create();
    await state.writeStore({
      main: await oldSession(state, "main", "id-main", 1),
      "group:old": await oldSession(state, "group:old", "id-old", 45),
    });
    const run = await state.cli(["sessions", "cleanup", "--purge", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { pruned: { done: string }[] }).pruned.map((p) => p.done)).toEqual([
      "deleted",
    ]);
    expect(existsSync(state.transcriptPath("id-old"))).toBe(false);
    expect(existsSync(join(state.dir, "sessions", "id-old"))).toBe(false);
    expect(existsSync(join(state.dir, "sessions", "archive", "id-old.jsonl"))).toBe(false);
  });

  it("maintenance enforce: the gateway prunes at start; a cleanup through it leaves a loaded session alone", async () => {
    const state = await E2eState.create({
      config: {
        inbound: {
          reply: { session: { maintenance: { mode: "enforce", pruneAfterDays: 30, maxEntries: 3 } } },
        },
      },
    });
    await state.writeStore({
      main: await oldSession(state, "main", "id-main", 100),
      "group:old": await oldSession(state, "group:old", "id-old", 45),
    });
    const gw = await state.startGateway();
    await gw.stderr.waitFor("session upkeep pruned sessions to the archive");
    expect(Object.keys(await state.readStore())).toEqual(["main"]);
    expect(existsSync(join(state.dir, "sessions", "archive", "id-old.jsonl"))).toBe(true);

    // Two more sessions; the web chat's `other` is loaded, so maxEntries 3 can only take `dm:idle`.
    ok(await gw.agent("hello", { session: "other" }));
    // Answered once the turns' store updates are written: the edits below are not raced by them.
    expect((await gw.call("GET", "/api/sessions")).status).toBe(200);
    const store = await state.readStore();
    await state.writeStore({
      ...store,
      "dm:idle": await oldSession(state, "dm:idle", "id-idle", 3),
      "dm:older": await oldSession(state, "dm:older", "id-older", 4),
    });
    const other = store.other;
    if (!other) throw new Error("no session other");
    const old = Date.now() - 10 * DAY;
    await state.writeStore({
      ...(await state.readStore()),
      other: { ...other, lastInteractionAt: old, updatedAt: old },
    });
    const run = await state.cli(["sessions", "cleanup", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { pruned: { key: string; done: string }[]; unmet: string[] };
    expect(report.pruned.map((p) => [p.key, p.done])).toEqual([["dm:older", "archived"]]);
    expect(Object.keys(await state.readStore()).sort()).toEqual(["dm:idle", "main", "other"]);
    await gw.stop();
  });
});

describe("e2e: /model and /compact", () => {
  it("/model lists the endpoint's models; /model <name> is used by the session's turns and shown by /status", async () => {
    const state = await E2eState.create();
    state.fake.models = ["fake-model", "big-model"];
    const gw = await state.startGateway();
    const list = ok(await gw.agent("/model"));
    expect(list.payloads.at(-1)?.text).toBe(
      "This session uses fake-model. The endpoint offers: fake-model (in use), big-model. Change it with /model <name>.",
    );
    const set = ok(await gw.agent("/model big-model"));
    expect(set.payloads.at(-1)?.text).toMatch(/^Model set to big-model for this session/);
    expect((await state.readStore()).main?.modelOverride).toBe("big-model");
    const before = state.fake.requests.length;
    ok(await gw.agent("which model?"));
    expect(state.fake.requests.slice(before).map((r) => r.body.model)).toEqual(["big-model"]);
    const status = ok(await gw.agent("/status"));
    expect(status.payloads.at(-1)?.text).toMatch(
      /Model: big-model for this session \(configured: fake-model\)/,
    );
    ok(await gw.agent("/model default"));
    const after = state.fake.requests.length;
    ok(await gw.agent("and now?"));
    expect(state.fake.requests.slice(after).map((r) => r.body.model)).toEqual(["fake-model"]);
    await gw.stop();
  });

  it("/compact compacts the session now and says by how much; the next turn resumes from the compaction", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    const nothing = ok(await gw.agent("/compact"));
    expect(nothing.payloads.at(-1)?.text).toMatch(/^Nothing to compact/);
    for (let i = 1; i <= 6; i++) ok(await gw.agent(`message number ${i} ${"with some words ".repeat(40)}`));
    const sessionId = (await state.readStore()).main?.sessionId ?? "";
    // The notes: one sidecar call, answered in a few words.
    state.fake.enqueue({ text: "They sent six numbered messages." });
    const answer = ok(await gw.agent("/compact"));
    const line = answer.payloads.at(-1)?.text ?? "";
    const match = /^context compacted: (\S+) -> (\S+) tokens$/.exec(line);
    expect(match, line).not.toBeNull();
    const compactions = (await state.transcript(sessionId)).filter((e) => e.type === "compaction");
    expect(compactions).toHaveLength(1);
    const entry = compactions[0] as { tokensBefore: number; tokensAfter: number; replacedEntries: number };
    expect(entry.tokensAfter).toBeLessThan(entry.tokensBefore);
    expect(entry.replacedEntries).toBeGreaterThan(0);
    expect(compactions[0]?.notes).toBe("They sent six numbered messages.");
    expect((await state.readStore()).main?.compactionCount).toBe(1);
    // The next turn's request starts from the notes: the first message is no longer sent verbatim.
    const before = state.fake.requests.length;
    ok(await gw.agent("after the compaction"));
    const sent = JSON.stringify(state.fake.requests.slice(before).at(-1)?.body.messages);
    expect(sent).not.toContain("message number 1 with");
    expect(sent).toContain("after the compaction");
    await gw.stop();
  });
});

describe("e2e: session titles", () => {
  it("after the first exchange one sidecar call names the session: in `sessions --json` and the table; a new session id gets its own", async () => {
    const state = await E2eState.create({ config: { inbound: { reply: { session: { titles: true } } } } });
    state.fake.titleText = '"Planning a trip to Lisbon."';
    const gw = await state.startGateway();
    const reply = ok(await gw.agent("help me plan a trip to Lisbon"));
    expect(reply.payloads).toEqual([{ text: "echo: help me plan a trip to Lisbon" }]);
    await waitForTitle(state, "main", "Planning a trip to Lisbon");
    expect(state.fake.titleRequests).toHaveLength(1);
    expect(JSON.stringify(state.fake.titleRequests[0]?.messages)).toContain("help me plan a trip to Lisbon");

    const json = await state.cli(["sessions", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    const rows = (JSON.parse(json.stdout) as { sessions: { key: string; title?: string }[] }).sessions;
    expect(rows.find((r) => r.key === "main")?.title).toBe("Planning a trip to Lisbon");
    const table = await state.cli(["sessions"]);
    expect(table.stdout).toMatch(/\tPlanning a trip to Lisbon\n/);

    // A second exchange asks for no second title; /new clears it, and the new session id's first exchange names it.
    ok(await gw.agent("and the hotels?"));
    state.fake.titleText = "Hotels";
    ok(await gw.agent("/new hotels in Porto"));
    await waitForTitle(state, "main", "Hotels");
    expect(state.fake.titleRequests).toHaveLength(2);
    await gw.stop();
  });
});

/** Waits (with a deadline naming it) until the entry of `key` has the title `expected`. */
async function waitForTitle(state: E2eState, key: string, expected: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const seen = (await state.readStore())[key]?.title;
    if (seen === expected) return;
    if (Date.now() > deadline)
      throw new Error(
        `session ${key} had no title ${JSON.stringify(expected)} within 10 s (it has ${JSON.stringify(seen)}; ${state.fake.titleRequests.length} title calls)`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
