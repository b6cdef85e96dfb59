import { describe, expect, it } from "vitest";
import { SessionQueue } from "./session-queue.js";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("SessionQueue", () => {
  it("runs one item at a time per key, in order, and keys concurrently", async () => {
    const log: string[] = [];
    const gates = new Map<string, ReturnType<typeof deferred>>();
    const started = new Map<string, ReturnType<typeof deferred>>();
    for (const name of ["a1", "a2", "b1"]) {
      gates.set(name, deferred());
      started.set(name, deferred());
    }
    const queue = new SessionQueue<string>(async (key, item) => {
      log.push(`start ${key}:${item}`);
      started.get(item)!.resolve();
      await gates.get(item)!.promise;
      log.push(`end ${key}:${item}`);
    });
    queue.push("a", "a1");
    queue.push("a", "a2");
    queue.push("b", "b1");
    await started.get("a1")!.promise;
    await started.get("b1")!.promise;
    expect(queue.isBusy("a")).toBe(true);
    expect(queue.waiting("a")).toBe(1);
    expect(log).toEqual(["start a:a1", "start b:b1"]);
    gates.get("a1")!.resolve();
    await started.get("a2")!.promise;
    expect(log).toEqual(["start a:a1", "start b:b1", "end a:a1", "start a:a2"]);
    gates.get("a2")!.resolve();
    gates.get("b1")!.resolve();
    await queue.drain();
    expect(queue.isBusy("a")).toBe(false);
    expect(log.filter((l) => l.startsWith("end"))).toHaveLength(3);
  });

  it("takeJoinable removes matching waiting items in order and keeps the rest in place", async () => {
    const gate = deferred();
    const ran: string[] = [];
    let taken: string[] = [];
    const queue = new SessionQueue<string>(async (_key, item) => {
      ran.push(item);
      if (item === "first") {
        await gate.promise;
        taken = queue.takeJoinable("k", (i) => i.startsWith("me"));
      }
    });
    queue.push("k", "first");
    queue.push("k", "me-1");
    queue.push("k", "other");
    queue.push("k", "me-2");
    gate.resolve();
    await queue.drain();
    expect(taken).toEqual(["me-1", "me-2"]);
    expect(ran).toEqual(["first", "other"]);
  });

  it("keeps going after a worker throws", async () => {
    const ran: string[] = [];
    const queue = new SessionQueue<string>(async (_key, item) => {
      ran.push(item);
      if (item === "bad") throw new Error("bug");
    });
    queue.push("k", "bad");
    queue.push("k", "good");
    await queue.drain();
    expect(ran).toEqual(["bad", "good"]);
  });
});
