import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { withDeadline } from "./with-deadline.js";

const timeout = () => new Error("too slow");

describe("withDeadline", () => {
  it("resolves with the work's value and clears its timer", async () => {
    const clock = new ManualClock();
    let seen: AbortSignal | undefined;
    const value = await withDeadline(
      async (signal) => {
        seen = signal;
        return 42;
      },
      { ms: 100, clock, timeoutError: timeout },
    );
    expect(value).toBe(42);
    clock.advance(1_000);
    expect(seen?.aborted).toBe(false);
  });

  it("passes the work's rejection through", async () => {
    const clock = new ManualClock();
    await expect(
      withDeadline(
        () => {
          throw new Error("sync failure");
        },
        { ms: 100, clock, timeoutError: timeout },
      ),
    ).rejects.toThrow("sync failure");
    await expect(
      withDeadline(() => Promise.reject(new Error("async failure")), {
        ms: 100,
        clock,
        timeoutError: timeout,
      }),
    ).rejects.toThrow("async failure");
  });

  it("rejects at the deadline and aborts the signal with the same error, without waiting for the work", async () => {
    const clock = new ManualClock();
    let seen: AbortSignal | undefined;
    const running = withDeadline(
      (signal) => {
        seen = signal;
        return new Promise<never>(() => {});
      },
      { ms: 100, clock, timeoutError: timeout },
    );
    clock.advance(99);
    expect(seen?.aborted).toBe(false);
    clock.advance(1);
    await expect(running).rejects.toThrow("too slow");
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBeInstanceOf(Error);
    expect(seen?.reason).toMatchObject({ message: "too slow" });
  });

  it("swallows a rejection that arrives after the deadline", async () => {
    const clock = new ManualClock();
    let rejectLate: (error: Error) => void = () => {};
    const running = withDeadline(
      () =>
        new Promise<never>((_resolve, reject) => {
          rejectLate = reject;
        }),
      { ms: 10, clock, timeoutError: timeout },
    );
    clock.advance(10);
    await expect(running).rejects.toThrow("too slow");
    rejectLate(new Error("late"));
    // An unhandled rejection would fail the run; give it a turn to surface.
    await new Promise((resolve) => setImmediate(resolve));
  });

  it("aborts when the outer signal aborts, with its reason", async () => {
    const clock = new ManualClock();
    const outer = new AbortController();
    let seen: AbortSignal | undefined;
    const running = withDeadline(
      (signal) => {
        seen = signal;
        return new Promise<never>(() => {});
      },
      { ms: 100, clock, timeoutError: timeout, signal: outer.signal },
    );
    outer.abort(new Error("stopping"));
    await expect(running).rejects.toThrow("stopping");
    expect(seen?.aborted).toBe(true);
  });

  it("does not call the work when the outer signal is already aborted", async () => {
    const clock = new ManualClock();
    const outer = new AbortController();
    outer.abort(new Error("already stopped"));
    let called = false;
    await expect(
      withDeadline(
        async () => {
          called = true;
        },
        { ms: 100, clock, timeoutError: timeout, signal: outer.signal },
      ),
    ).rejects.toThrow("already stopped");
    expect(called).toBe(false);
  });
});
