import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalMessage as message } from "../../test/helpers/journal-message.js";
import { createMemoryLogger } from "../core/logger.js";
import { Journal } from "./journal.js";

/** The send thread's confirmations file (`inbound.confirmed.jsonl`): read at open as if it followed the journal. */

describe("Journal: the send thread's confirmations", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-confirmed-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const { logger } = createMemoryLogger();

  /** A run that accepted three messages and stopped (kill -9) with none of them ended in its own file. */
  async function acceptThree(): Promise<{ journal: Journal; jids: string[] }> {
    const journal = new Journal({ dir, logger });
    await journal.openJournal();
    const jids = [await journal.accept(message("a"), 1), await journal.accept(message("b"), 2)];
    jids.push(await journal.accept(message("c"), 3));
    await journal.close();
    return { journal, jids };
  }

  it("ends the records and marks the parts it names, and a compacting open writes that in and removes it", async () => {
    const { journal, jids } = await acceptThree();
    const [a, b, c] = jids as [string, string, string];
    appendFileSync(
      journal.confirmationsPath,
      journal.endLines([{ jid: a }, { jid: b, reason: `answered with ${a}` }], "replied", 5) +
        journal.deliveredLine(c, 0, 6) +
        journal.deliveredLine(c, 0, 7),
    );
    const again = new Journal({ dir, logger });
    const open = await again.openJournal();
    // `c`'s part 0 counts once, though the main thread's record of it may be in the journal too.
    expect(open.map((r) => [r.jid, r.delivered])).toEqual([[c, [0]]]);
    expect(existsSync(again.confirmationsPath)).toBe(false);
    await again.close();
    const third = new Journal({ dir, logger });
    expect((await third.openJournal()).map((r) => [r.jid, r.delivered])).toEqual([[c, [0]]]);
    await third.close();
  });

  it("an open that does not compact (a one-shot run) reads it and leaves it as it is", async () => {
    const { journal, jids } = await acceptThree();
    const lines = journal.endLines([{ jid: jids[0]! }], "replied", 5);
    appendFileSync(journal.confirmationsPath, lines);
    const oneShot = new Journal({ dir, logger });
    expect((await oneShot.openJournal({ compact: false })).map((r) => r.jid)).toEqual(jids.slice(1));
    await oneShot.close();
    expect(readFileSync(journal.confirmationsPath, "utf8")).toBe(lines);
  });

  it("takes only delivery records from it, and skips lines that do not parse (logged)", async () => {
    const { journal, jids } = await acceptThree();
    const { logger: seen, lines } = createMemoryLogger();
    appendFileSync(
      journal.confirmationsPath,
      `${JSON.stringify({ op: "accept", jid: "stranger", at: 1, msg: {} })}\nnot json\n`,
    );
    const again = new Journal({ dir, logger: seen });
    expect((await again.openJournal()).map((r) => r.jid)).toEqual(jids);
    await again.close();
    expect(lines.map((l) => [l.message, l.fields?.path, l.fields?.lines])).toContainEqual([
      "journal: skipped lines that do not parse",
      journal.confirmationsPath,
      1,
    ]);
  });
});
