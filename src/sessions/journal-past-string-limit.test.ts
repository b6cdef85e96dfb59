import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { journalMessage as message } from "../../test/helpers/journal-message.js";
import { spliced, writePieces } from "../../test/helpers/write-pieces.js";
import { createMemoryLogger } from "../core/logger.js";
import { Journal } from "./journal.js";

/** Stands for a record's 1 MiB text in its JSON until the text's bytes are spliced in. */
const TEXT = "<<text>>";

/** The journal past V8's longest string: its own file, since it writes and reads ~556 MB (left out of test:quick). */

describe("Journal: a file past the longest string", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-journal-big-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("opens a journal larger than the longest string V8 can hold (streamed, line by line)", async () => {
    const { logger } = createMemoryLogger();
    // 530 finished records of 1 MiB each: ~556 MB, past V8's ~512 MB string limit that a whole-file read hits.
    const text = Buffer.from("x".repeat(1024 * 1024));
    function* records(): Generator<string | Buffer> {
      for (let i = 0; i < 530; i++) {
        const accept = { op: "accept", jid: `j${i}`, at: 1, msg: message(`big${i}`, TEXT) };
        yield* spliced(JSON.stringify(accept), TEXT, text);
        yield `\n${JSON.stringify({ op: "end", jid: `j${i}`, at: 2, outcome: "replied" })}\n`;
      }
      yield `${JSON.stringify({ op: "accept", jid: "open-one", at: 3, msg: message("last") })}\n`;
    }
    await writePieces(join(dir, "inbound.jsonl"), records());
    expect((await stat(join(dir, "inbound.jsonl"))).size).toBeGreaterThan(0x1fffffe8);
    const journal = new Journal({ dir, logger });
    expect((await journal.openJournal()).map((r) => r.jid)).toEqual(["open-one"]);
    expect(journal.isDuplicate(message("big529"))).toBe(true);
    await journal.close();
    expect((await stat(join(dir, "inbound.jsonl"))).size).toBeLessThan(1024 * 1024);
  }, 60_000);
});
