import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import {
  DEFAULT_DOWNLOAD_LIMITS,
  downloadLimits,
  downloadVerdict,
  watchDownload,
} from "./download-deadline.js";

const limits = { totalMs: 30_000, windowMs: 10_000, minBytesPerWindow: 40 * 1024 };

describe("downloadVerdict", () => {
  it.each([
    [{ elapsedMs: 10_000, windowMs: 10_000, windowBytes: 40 * 1024 }, undefined],
    [{ elapsedMs: 10_000, windowMs: 10_000, windowBytes: 40 * 1024 - 1 }, "slower than 4 KB/s for 10 s"],
    [{ elapsedMs: 10_000, windowMs: 10_000, windowBytes: 0 }, "slower than 4 KB/s for 10 s"],
    // A window shorter than the rate's (the last one before the total deadline) is not judged for rate.
    [{ elapsedMs: 25_000, windowMs: 5_000, windowBytes: 0 }, undefined],
    [{ elapsedMs: 30_000, windowMs: 10_000, windowBytes: 1_000_000 }, "not done within 30 s"],
  ])("%j: %s", (check, verdict) => {
    expect(downloadVerdict(check, limits)).toBe(verdict);
  });

  it("defaults to 120 s in all and 4 KB/s; the config sets only the total", () => {
    expect(DEFAULT_DOWNLOAD_LIMITS).toEqual({
      totalMs: 120_000,
      windowMs: 10_000,
      minBytesPerWindow: 40_960,
    });
    expect(downloadLimits(1.5)).toEqual({ ...DEFAULT_DOWNLOAD_LIMITS, totalMs: 1500 });
  });
});

describe("watchDownload", () => {
  it("aborts at the first window without enough bytes, with the reason", () => {
    const clock = new ManualClock();
    const watch = watchDownload(limits, clock);
    watch.progress(50_000);
    clock.advance(10_000);
    expect(watch.signal.aborted).toBe(false);
    watch.progress(1000);
    clock.advance(10_000);
    expect(watch.signal.aborted).toBe(true);
    expect(watch.reason).toBe("slower than 4 KB/s for 10 s");
    expect((watch.signal.reason as Error).message).toBe("timed out (slower than 4 KB/s for 10 s)");
  });

  it("aborts at the total deadline however fast the bytes come; a total below the window is judged at it", () => {
    const clock = new ManualClock();
    const fast = watchDownload(limits, clock);
    for (let i = 0; i < 3; i++) {
      fast.progress(1_000_000);
      clock.advance(9_999);
      expect(fast.signal.aborted).toBe(false);
      clock.advance(1);
    }
    expect(fast.reason).toBe("not done within 30 s");
    const short = watchDownload({ ...limits, totalMs: 2_000 }, clock);
    clock.advance(1_999);
    expect(short.signal.aborted).toBe(false);
    clock.advance(1);
    expect(short.reason).toBe("not done within 2 s");
  });

  it("does nothing once ended", () => {
    const clock = new ManualClock();
    const watch = watchDownload(limits, clock);
    watch.end();
    clock.advance(60_000);
    expect(watch.signal.aborted).toBe(false);
    expect(watch.reason).toBeUndefined();
  });
});
