import { Console } from "node:console";
import { createRequire } from "node:module";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { filterLibsignalConsole, libsignalChatter } from "./libsignal-console.js";

/** The real libsignal that Baileys loads (resolved from Baileys' own folder). */
interface SessionEntryLike {
  indexInfo: { closed: number; baseKey?: Buffer };
}
interface SessionRecordLike {
  closeSession(session: SessionEntryLike): void;
  openSession(session: SessionEntryLike): void;
}
const fromBaileys = createRequire(createRequire(import.meta.url).resolve("@whiskeysockets/baileys"));
const { SessionRecord } = fromBaileys("libsignal") as {
  SessionRecord: { new (): SessionRecordLike; createEntry(): SessionEntryLike };
};

describe("libsignalChatter", () => {
  it.each<[unknown[], string | undefined]>([
    [["Closing session:", { privKey: "secret" }], "Closing session"],
    [["Opening session:", {}], "Opening session"],
    [["Removing old closed session:", {}], "Removing old closed session"],
    [["Session already closed", {}], "Session already closed"],
    [["Session already open"], "Session already open"],
    [["Migrating session to:", "v1"], "Migrating session to"],
    [
      ["Closing open session in favor of incoming prekey bundle"],
      "Closing open session in favor of incoming prekey bundle",
    ],
    [["Decrypted message with closed session."], "Decrypted message with closed session"],
    [["Closing session: now"], undefined],
    [["closing session:", {}], undefined],
    [["hello"], undefined],
    [[{ msg: "Closing session:" }], undefined],
    [[], undefined],
  ])("%j -> %j", (args, line) => {
    expect(libsignalChatter(args)).toBe(line);
  });
});

describe("filterLibsignalConsole, with the real libsignal", () => {
  const saved = globalThis.console;
  afterEach(() => {
    globalThis.console = saved;
  });

  it("keeps libsignal's session dumps (with their keys) out of the console, says them to the sink, and passes the rest", () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
    const target = new Console({ stdout: out, stderr: out });
    const lines: string[] = [];
    globalThis.console = target;
    const restore = filterLibsignalConsole(target, (line) => lines.push(line));

    const record = new SessionRecord();
    const session = SessionRecord.createEntry();
    session.indexInfo = { closed: -1, baseKey: Buffer.from("a-base-key-that-must-not-print") };
    record.closeSession(session);
    record.openSession(session);
    console.info("Closing session: by someone else");
    console.warn("a warning of our own", { n: 1 });
    console.error("Closing session:", "errors always pass");
    restore();
    console.info("Closing session:", "after restore");
    globalThis.console = saved;

    const printed = chunks.join("");
    expect(lines).toEqual(["Closing session", "Opening session"]);
    expect(printed).not.toContain("a-base-key");
    expect(printed).not.toContain("SessionEntry");
    expect(printed).toContain("Closing session: by someone else");
    expect(printed).toContain("a warning of our own { n: 1 }");
    expect(printed).toContain("Closing session: errors always pass");
    expect(printed).toContain("Closing session: after restore");
  });
});
