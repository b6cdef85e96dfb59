import { describe, expect, it } from "vitest";
import {
  onStreamEvent,
  onStreamStart,
  type StreamEvent,
  type StreamWatchState,
  streamLimits,
  type TimeoutSettings,
} from "./stream-deadlines.js";

const defaults: TimeoutSettings = {
  prefillSeconds: 1800,
  firstTokenSeconds: 600,
  noProgressSeconds: 1200,
  turnLlmSeconds: 180,
  toolExecutionSeconds: 90,
  sidecarLlmSeconds: 90,
};

describe("streamLimits", () => {
  it.each([
    ["the defaults: silence is firstTokenSeconds", {}, 600_000, "firstTokenSeconds"],
    [
      "turnLlmSeconds set away from 180 alone: it is the silence limit",
      { turnLlmSeconds: 40 },
      40_000,
      "turnLlmSeconds",
    ],
    [
      "both set: firstTokenSeconds wins",
      { turnLlmSeconds: 40, firstTokenSeconds: 30 },
      30_000,
      "firstTokenSeconds",
    ],
  ])("%s", (_name, over, silenceMs, key) => {
    const limits = streamLimits({ ...defaults, ...over });
    expect(limits.silenceMs).toBe(silenceMs);
    expect(limits.silenceKey).toBe(key);
    expect(limits.prefillMs).toBe(1_800_000);
  });
});

describe("stream deadlines", () => {
  const limits = streamLimits({
    ...defaults,
    prefillSeconds: 100,
    firstTokenSeconds: 10,
    noProgressSeconds: 20,
  });

  /** Plays events at the given times; returns the deadlines in force afterwards. */
  function play(events: [number, StreamEvent][]): Record<string, number | null> {
    const deadlines: Record<string, number | null> = { ...onStreamStart(limits, 0) };
    let state: StreamWatchState = {};
    for (const [at, event] of events) {
      const r = onStreamEvent(limits, state, event, at);
      state = r.state;
      Object.assign(deadlines, r.deadlines);
    }
    return deadlines;
  }

  it.each([
    ["before any token only prefill runs", [], { prefill: 100_000, silence: null, "no-progress": null }],
    [
      "keep-alives change nothing",
      [[50_000, "keepalive"]],
      { prefill: 100_000, silence: null, "no-progress": null },
    ],
    [
      "the first token ends prefill and starts silence and no-progress",
      [[5_000, "output"]],
      { prefill: null, silence: 15_000, "no-progress": 25_000 },
    ],
    [
      "output resets both",
      [
        [5_000, "output"],
        [12_000, "output"],
      ],
      { prefill: null, silence: 22_000, "no-progress": 32_000 },
    ],
    [
      "keep-alives after output do not count as progress",
      [
        [5_000, "output"],
        [9_000, "keepalive"],
        [14_000, "keepalive"],
      ],
      { prefill: null, silence: 15_000, "no-progress": 25_000 },
    ],
    [
      "reasoning resets silence; no-progress becomes 3x since the last real output",
      [
        [5_000, "output"],
        [12_000, "reasoning"],
      ],
      { prefill: null, silence: 22_000, "no-progress": 65_000 },
    ],
    [
      "reasoning only, from the first token: 3x since it",
      [
        [5_000, "reasoning"],
        [30_000, "reasoning"],
        [60_000, "reasoning"],
      ],
      { prefill: null, silence: 70_000, "no-progress": 65_000 },
    ],
  ] as [string, [number, StreamEvent][], Record<string, number | null>][])(
    "%s",
    (_name, events, expected) => {
      expect(play(events)).toEqual(expected);
    },
  );
});
