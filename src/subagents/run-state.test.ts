import { describe, expect, it } from "vitest";
import { holdsParent, nextRunState, type RunEvent, type RunState, STARTED } from "./run-state.js";

const ended = (status: RunState["status"], reported = false): RunState => ({ status, reported });

describe("the run state machine", () => {
  it.each([
    [STARTED, "finish", ended("done")],
    [STARTED, "fail", ended("failed")],
    [STARTED, "cancel", ended("cancelled")],
    [STARTED, "owner_restarted", ended("owner_restarted")],
    [ended("done"), "report", ended("done", true)],
    [ended("owner_restarted"), "report", ended("owner_restarted", true)],
    [ended("cancelled"), "report", ended("cancelled", true)],
    [STARTED, "ask", ended("waiting-approval")],
    [STARTED, "park", ended("parked")],
    [ended("waiting-approval"), "resume", STARTED],
    [ended("parked"), "resume", STARTED],
    [ended("waiting-approval"), "cancel", ended("cancelled")],
    [ended("parked"), "owner_restarted", ended("owner_restarted")],
    [ended("waiting-approval"), "owner_restarted", ended("owner_restarted")],
  ] as [RunState, RunEvent, RunState][])("%o + %s -> %o", (state, event, next) => {
    expect(nextRunState(state, event)).toEqual(next);
  });

  it.each([
    [STARTED, "report", /cannot report a run that is running/],
    [ended("waiting-approval"), "report", /cannot report a run that is waiting-approval/],
    [ended("parked"), "report", /cannot report a run that is parked/],
    [ended("waiting-approval"), "finish", /cannot finish a run that is waiting-approval/],
    [ended("parked"), "ask", /cannot ask a run that is parked/],
    [ended("waiting-approval"), "park", /cannot park a run that is waiting-approval/],
    [STARTED, "resume", /cannot resume a run that is running/],
    [ended("done"), "resume", /cannot resume a run that is done/],
    [ended("done", true), "report", /cannot report a run that is done and reported/],
    [ended("done"), "finish", /cannot finish a run that is done/],
    [ended("failed"), "cancel", /cannot cancel a run that is failed/],
    [ended("cancelled"), "owner_restarted", /cannot owner_restarted a run that is cancelled/],
    [ended("owner_restarted", true), "fail", /cannot fail a run that is owner_restarted and reported/],
  ] as [RunState, RunEvent, RegExp][])("%o + %s is illegal", (state, event, why) => {
    expect(() => nextRunState(state, event)).toThrow(why);
  });

  it.each([
    [STARTED, true],
    [ended("waiting-approval"), true],
    [ended("parked"), true],
    [ended("done"), true],
    [ended("done", true), false],
    [ended("owner_restarted", true), false],
  ] as [RunState, boolean][])("%o holds its parent loaded: %s", (state, holds) => {
    expect(holdsParent(state)).toBe(holds);
  });
});
