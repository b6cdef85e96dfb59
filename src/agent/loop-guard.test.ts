import { describe, expect, it } from "vitest";
import {
  afterBatch,
  afterCall,
  beforeCall,
  callSignature,
  type GuardCall,
  type GuardOutcome,
  type LoopGuardState,
  newLoopGuard,
  parseLoopGuard,
  stopsOnToolRequest,
} from "./loop-guard.js";

const ls: GuardCall = { name: "bash", arguments: '{"command":"ls","cwd":"/"}' };
const same = { ok: true, output: "a b c" };

/** Runs `call` through the guard as the turn loop does; returns the decision's action. */
function step(state: LoopGuardState, call: GuardCall, outcome: GuardOutcome) {
  const d = beforeCall(state, call);
  if (d.action !== "run") return { state: d.state, action: d.action, output: "output" in d ? d.output : "" };
  return { state: afterCall(d.state, call, outcome), action: "run" as const, output: outcome.output };
}

describe("loop guard: repeated calls", () => {
  it("keys are sorted: the same arguments in another order are the same call", () => {
    expect(callSignature({ name: "bash", arguments: '{"cwd":"/","command":"ls"}' })).toBe(callSignature(ls));
    expect(callSignature({ name: "bash", arguments: '{"command":"pwd","cwd":"/"}' })).not.toBe(
      callSignature(ls),
    );
  });

  it.each([
    // [outcomes of the runs, actions expected for each attempt]
    ["two equal runs, then refused", [same, same, same], ["run", "run", "refuse"]],
    [
      "a poll whose result changes is not a loop",
      [same, { ok: true, output: "d" }, same, same],
      ["run", "run", "run", "run"],
    ],
  ])("%s", (_name, outcomes, actions) => {
    let state = newLoopGuard();
    const seen: string[] = [];
    for (const outcome of outcomes as GuardOutcome[]) {
      const r = step(state, ls, outcome);
      state = r.state;
      seen.push(r.action);
    }
    expect(seen).toEqual(actions);
  });

  it("refusals 1-4 nudge, the 5th nudges harder, the 6th stops the turn", () => {
    let state = newLoopGuard();
    state = step(state, ls, same).state;
    state = step(state, ls, same).state;
    const outputs: string[] = [];
    const actions: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = step(state, ls, same);
      state = r.state;
      actions.push(r.action);
      outputs.push(r.output);
    }
    expect(actions).toEqual(["refuse", "refuse", "refuse", "refuse", "refuse", "stop"]);
    for (const text of outputs.slice(0, 4)) expect(text).toContain("try something different");
    expect(outputs[4]).toContain("last warning");
    expect(outputs[4]).not.toContain("try something different");
  });

  it("a different call is not refused", () => {
    let state = newLoopGuard();
    state = step(state, ls, same).state;
    state = step(state, ls, same).state;
    expect(beforeCall(state, { name: "bash", arguments: '{"command":"pwd"}' }).action).toBe("run");
  });

  it("the state survives a save and load (JSON), and a foreign one is not used", () => {
    let state = newLoopGuard();
    state = step(state, ls, same).state;
    state = step(state, ls, same).state;
    const loaded = parseLoopGuard(JSON.parse(JSON.stringify(state)));
    expect(loaded && beforeCall(loaded, ls).action).toBe("refuse");
    expect(parseLoopGuard({ v: 99 })).toBeUndefined();
    expect(parseLoopGuard("x")).toBeUndefined();
  });
});

describe("loop guard: failed calls", () => {
  const fail = (name: string, output: string, timedOut = false) => ({
    call: { name, arguments: `{"n":"${Math.random()}"}` },
    outcome: { ok: false, output, ...(timedOut ? { timedOut: true } : {}) },
  });

  it.each([
    // [batches of failures, expected score, expected nudge kind]
    [
      "three different failures: 3, no nudge",
      [[fail("a", "x"), fail("b", "y"), fail("c", "z")]],
      3,
      undefined,
    ],
    [
      "four different failures: nudge at 4",
      [[fail("a", "x"), fail("b", "y"), fail("c", "z"), fail("d", "w")]],
      4,
      "several",
    ],
    [
      "a repeated cause weighs 2: 1 + 2 + 2 = 5",
      [[fail("a", "boom 1"), fail("a", "boom 2"), fail("a", "boom 3")]],
      5,
      "several",
    ],
    ["a timeout weighs 2", [[fail("a", "t", true), fail("b", "t", true)]], 4, "several"],
    [
      "six: the stronger nudge",
      [[fail("a", "1"), fail("b", "2"), fail("c", "3"), fail("d", "4"), fail("e", "5"), fail("f", "6")]],
      6,
      "Stop retrying",
    ],
  ])("%s", (_name, batches, score, nudge) => {
    let state = newLoopGuard();
    let last: string | undefined;
    for (const batch of batches) {
      const r = afterBatch(state, batch);
      state = r.state;
      last = r.nudge;
    }
    expect(state.failScore).toBe(score);
    if (nudge === undefined) expect(last).toBeUndefined();
    else expect(last).toContain(nudge);
  });

  it("the nudge names the repeated cause", () => {
    const r = afterBatch(newLoopGuard(), [
      fail("read_file", "ENOENT: no such file 12"),
      fail("read_file", "ENOENT: no such file 13"),
      fail("bash", "x"),
    ]);
    expect(r.nudge).toContain("read_file: ENOENT: no such file N (2 times)");
  });

  it("one success in a batch resets the score; a refused call is no success", () => {
    let state = afterBatch(newLoopGuard(), [fail("a", "1"), fail("b", "2"), fail("c", "3")]).state;
    state = afterBatch(state, [{ ...fail("a", "refused"), refused: true }]).state;
    expect(state.failScore).toBe(3);
    state = afterBatch(state, [fail("x", "4"), { call: ls, outcome: same }]).state;
    expect(state.failScore).toBe(0);
  });

  it("from 8 on, a response that asks for tools ends the turn", () => {
    let state = newLoopGuard();
    for (let i = 0; i < 7; i++) state = afterBatch(state, [fail(`t${i}`, `e${i}`)]).state;
    expect(stopsOnToolRequest(state)).toBe(false);
    state = afterBatch(state, [fail("t8", "e8")]).state;
    expect(state.failScore).toBe(8);
    expect(stopsOnToolRequest(state)).toBe(true);
  });

  it("each nudge comes once per run of failures", () => {
    let state = newLoopGuard();
    const nudges: (string | undefined)[] = [];
    for (let i = 0; i < 7; i++) {
      const r = afterBatch(state, [fail(`t${i}`, `e${i}`)]);
      state = r.state;
      nudges.push(r.nudge);
    }
    expect(nudges.map((n) => (n ? (n.includes("Stop retrying") ? 6 : 4) : 0))).toEqual([0, 0, 0, 4, 0, 6, 0]);
  });
});
