import { describe, expect, it } from "vitest";
import { ChatLanes } from "./chat-lanes.js";

/** A job that runs until `release` is called, recording when it started. */
function held(log: string[], name: string) {
  let release = () => {};
  const done = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    job: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
    },
    release: () => release(),
  };
}

const quiet = { onError: () => {}, skipped: () => {} };

describe("ChatLanes", () => {
  it("runs one chat's jobs in order and other chats' at the same time", async () => {
    const lanes = new ChatLanes();
    const log: string[] = [];
    const a1 = held(log, "a1");
    lanes.add("a", a1.job, quiet);
    lanes.add("a", async () => void log.push("a2"), quiet);
    lanes.add("b", async () => void log.push("b1"), quiet);
    await new Promise(setImmediate);
    expect(log).toEqual(["start a1", "b1"]);
    a1.release();
    await lanes.idle();
    expect(log).toEqual(["start a1", "b1", "end a1", "a2"]);
  });

  it("a job that throws skips the rest of its lane, not other lanes; the lane works again once empty", async () => {
    const lanes = new ChatLanes();
    const log: string[] = [];
    lanes.add(
      "a",
      async () => {
        throw new Error("disk full");
      },
      { onError: (e) => log.push(`error ${(e as Error).message}`), skipped: () => log.push("never") },
    );
    lanes.add("a", async () => void log.push("a2 ran"), {
      onError: () => {},
      skipped: () => log.push("a2 skipped"),
    });
    lanes.add("b", async () => void log.push("b1 ran"), quiet);
    await lanes.idle();
    expect(log.sort()).toEqual(["a2 skipped", "b1 ran", "error disk full"]);
    lanes.add("a", async () => void log.push("a3 ran"), quiet);
    await lanes.idle();
    expect(log).toContain("a3 ran");
  });
});
