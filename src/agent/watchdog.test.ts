import { describe, expect, it } from "vitest";
import { ManualClock } from "../core/clock.js";
import { Watchdog, WatchdogTimeout } from "./watchdog.js";

describe("Watchdog", () => {
  it("aborts with the name of the deadline that passed", () => {
    const clock = new ManualClock();
    const dog = new Watchdog(clock);
    dog.arm("first-token", 10);
    clock.advance(9_999);
    expect(dog.signal.aborted).toBe(false);
    clock.advance(1);
    expect(dog.signal.aborted).toBe(true);
    expect(dog.fired()).toBeInstanceOf(WatchdogTimeout);
    expect(dog.fired()?.watchdog).toBe("first-token");
    dog.dispose();
  });

  it("re-arming pushes the deadline back; disarm and dispose clear it", () => {
    const clock = new ManualClock();
    const dog = new Watchdog(clock);
    dog.arm("no-progress", 5);
    clock.advance(4_000);
    dog.arm("no-progress", 5);
    clock.advance(4_000);
    expect(dog.signal.aborted).toBe(false);
    dog.disarm("no-progress");
    clock.advance(60_000);
    expect(dog.signal.aborted).toBe(false);
    dog.arm("x", 1);
    dog.dispose();
    clock.advance(60_000);
    expect(dog.signal.aborted).toBe(false);
  });

  it("follows its parent signal, which is not a watchdog timeout", () => {
    const clock = new ManualClock();
    const parent = new AbortController();
    const dog = new Watchdog(clock, parent.signal);
    parent.abort("stop");
    expect(dog.signal.aborted).toBe(true);
    expect(dog.signal.reason).toBe("stop");
    expect(dog.fired()).toBeUndefined();
    dog.dispose();
  });
});
