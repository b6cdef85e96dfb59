import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { drainWithin, runShutdown } from "./shutdown.js";

describe("runShutdown", () => {
  it("runs the stages in order, awaiting each", async () => {
    const ran: string[] = [];
    const stage = (name: string) => ({
      name,
      run: async () => {
        await Promise.resolve();
        ran.push(name);
      },
    });
    const failed = await runShutdown([stage("drain"), stage("outbox"), stage("journal")], () => {});
    expect(ran).toEqual(["drain", "outbox", "journal"]);
    expect(failed).toEqual([]);
  });

  it("reports a failing stage by name and still runs the rest", async () => {
    const ran: string[] = [];
    const reported: Array<[string, unknown]> = [];
    const boom = new Error("boom");
    const failed = await runShutdown(
      [
        {
          name: "host",
          run: () => {
            throw boom;
          },
        },
        {
          name: "http",
          run: async () => {
            throw boom;
          },
        },
        {
          name: "journal",
          run: () => {
            ran.push("journal");
          },
        },
      ],
      (name, error) => reported.push([name, error]),
    );
    expect(ran).toEqual(["journal"]);
    expect(failed).toEqual(["host", "http"]);
    expect(reported).toEqual([
      ["host", boom],
      ["http", boom],
    ]);
  });
});

describe("drainWithin", () => {
  it("resolves drained when the turns reach their safe point in time; nothing is aborted", async () => {
    const clock = new ManualClock(0);
    let aborted = false;
    const result = await drainWithin(
      () => Promise.resolve(),
      () => {
        aborted = true;
      },
      1000,
      clock,
    );
    expect(result).toBe("drained");
    expect(aborted).toBe(false);
  });

  it("past the deadline it aborts what still runs and waits for the drain again", async () => {
    const clock = new ManualClock(0);
    let finish!: () => void;
    const running = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const calls: string[] = [];
    const result = drainWithin(
      () => {
        calls.push("drain");
        return running;
      },
      () => {
        calls.push("abort");
        finish();
      },
      1000,
      clock,
    );
    clock.advance(999);
    await Promise.resolve();
    expect(calls).toEqual(["drain"]);
    clock.advance(1);
    expect(await result).toBe("aborted");
    expect(calls).toEqual(["drain", "abort", "drain"]);
  });
});
