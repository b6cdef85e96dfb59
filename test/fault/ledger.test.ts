import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Ledger } from "./ledger.js";
import { runSeed, SeededRandom } from "./seeded-random.js";

/** The auditor of the fault suite on transcripts written by hand: each count can go wrong, and is seen to. */
describe("Ledger.audit", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-ledger-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const header = JSON.stringify({ type: "session", version: 1, id: "s", sessionKey: "main", createdAt: "x" });
  const user = (text: string, journalId: string) =>
    JSON.stringify({
      type: "message",
      id: "u",
      ts: "t",
      message: { role: "user", content: text },
      meta: { journalId },
    });
  const reply = (text: string, journalId: string, final = true) =>
    JSON.stringify({
      type: "message",
      id: "a",
      ts: "t",
      message: { role: "assistant", content: text },
      meta: { journalId, ...(final ? { final: true } : {}) },
    });
  const write = (name: string, lines: string[]) => writeFile(join(dir, name), `${lines.join("\n")}\n`);

  it("counts answered, lost, answered twice and torn lines", async () => {
    const ledger = new Ledger();
    const [once, lost, twice, byJournal, joined, unacked] = Array.from({ length: 6 }, () =>
      ledger.mint("api", "main"),
    ) as [ReturnType<Ledger["mint"]>, ...ReturnType<Ledger["mint"]>[]];
    for (const m of [once, lost, twice, byJournal!, joined!]) ledger.ack(m!);
    await write("s1.jsonl", [
      header,
      user(once.text, "j1"),
      reply(`echo: ${once.text}`, "j1"),
      user(lost!.text, "j2"),
      reply(`echo: ${lost!.text}`, "j2", false),
      user(twice!.text, "j3"),
      reply(`echo: ${twice!.text}`, "j3"),
      reply(`echo: ${twice!.text}`, "j3"),
      user(byJournal!.text, "j4"),
      reply(`echo: ${byJournal!.text}`, "j4"),
      reply("echo: ", "j4"),
      user(joined!.text, "j5"),
      '{"type":"message","cut',
    ]);
    await write("s2.jsonl", [header, user(unacked!.text, "j6"), reply(`echo: ${joined!.text} | x`, "j9")]);
    const audit = await ledger.audit(dir);
    expect(audit.sent).toBe(6);
    expect(audit.acked).toBe(5);
    expect(audit.lost).toEqual([`${lost!.marker} (api → main)`]);
    expect(audit.twice.map((t) => t.split(" ")[0])).toEqual([twice!.marker, byJournal!.marker]);
    expect(audit.torn.map((t) => [t.file, t.lineNumber])).toEqual([["s1.jsonl", 13]]);
    expect(audit.unackedUnanswered).toBe(1);
    expect(audit.transcripts).toBe(2);
  });

  it("does not count the lines a scenario wrote on purpose, nor a user entry stored twice as answered once", async () => {
    const ledger = new Ledger();
    const m = ledger.mint("webhook", "hooks:ci");
    ledger.ack(m, "j1");
    ledger.injectedLines.add("garbage {{{");
    await write("s.jsonl", [
      header,
      user(m.text, "j1"),
      user(m.text, "j1"),
      "garbage {{{",
      reply(`echo: ${m.text}`, "j1"),
    ]);
    const audit = await ledger.audit(dir);
    expect(audit.torn).toEqual([]);
    expect(audit.lost).toEqual([]);
    expect(audit.twice).toHaveLength(1);
    expect(audit.twice[0]).toContain("2 user entries");
  });

  it("markers do not collide: <m1> is not found inside <m12>", async () => {
    const ledger = new Ledger();
    const first = ledger.mint("api", "main");
    for (let i = 0; i < 11; i++) ledger.mint("api", "main");
    ledger.ack(first);
    await write("s.jsonl", [header, user("<m12>", "j"), reply("echo: <m12>", "j")]);
    expect((await ledger.audit(dir)).lost).toEqual(["<m1> (api → main)"]);
  });
});

describe("SeededRandom", () => {
  it("repeats its choices for a seed and stays in range", () => {
    const a = new SeededRandom(42);
    const b = new SeededRandom(42);
    const seq = Array.from({ length: 50 }, () => a.int(3, 7));
    expect(Array.from({ length: 50 }, () => b.int(3, 7))).toEqual(seq);
    expect(Math.min(...seq)).toBe(3);
    expect(Math.max(...seq)).toBe(7);
    expect(new SeededRandom(43).int(0, 1e9)).not.toBe(new SeededRandom(42).int(0, 1e9));
  });

  it("takes FAULT_SEED, and refuses one that is not a non-negative integer", () => {
    expect(runSeed({ FAULT_SEED: "1234" })).toBe(1234);
    expect(() => runSeed({ FAULT_SEED: "-1" })).toThrow(/FAULT_SEED/);
    expect(() => runSeed({ FAULT_SEED: "abc" })).toThrow(/FAULT_SEED/);
    expect(Number.isInteger(runSeed({}))).toBe(true);
  });
});
