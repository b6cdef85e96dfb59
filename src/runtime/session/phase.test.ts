import { describe, expect, it } from "vitest";
import {
  canTransition,
  IllegalPhaseTransition,
  nextPhase,
  PHASE_TRANSITIONS,
  SESSION_PHASES,
  type SessionPhase,
} from "./phase.js";

/** Every pair of phases and whether the lifecycle allows it (SPEC section 6). */
const table: [SessionPhase, SessionPhase, boolean][] = [
  ["recovering", "recovering", false],
  ["recovering", "ready", true],
  ["recovering", "processing", true],
  ["recovering", "compacting", false],
  ["recovering", "passivating", false],
  ["ready", "recovering", false],
  ["ready", "ready", false],
  ["ready", "processing", true],
  ["ready", "compacting", false],
  ["ready", "passivating", true],
  ["processing", "recovering", false],
  ["processing", "ready", true],
  ["processing", "processing", false],
  ["processing", "compacting", true],
  ["processing", "passivating", false],
  ["compacting", "recovering", false],
  ["compacting", "ready", true],
  ["compacting", "processing", true],
  ["compacting", "compacting", false],
  ["compacting", "passivating", false],
  ["passivating", "recovering", false],
  ["passivating", "ready", true],
  ["passivating", "processing", false],
  ["passivating", "compacting", false],
  ["passivating", "passivating", false],
];

describe("session phases", () => {
  it("the table covers every pair of phases", () => {
    expect(table).toHaveLength(SESSION_PHASES.length ** 2);
    for (const from of SESSION_PHASES) expect(PHASE_TRANSITIONS[from]).toBeDefined();
  });

  it.each(table)("%s -> %s allowed: %s", (from, to, allowed) => {
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) expect(nextPhase(from, to)).toBe(to);
    else expect(() => nextPhase(from, to)).toThrow(IllegalPhaseTransition);
  });

  it("an illegal transition names both phases", () => {
    expect(() => nextPhase("passivating", "processing")).toThrow(
      "illegal session phase transition passivating -> processing",
    );
  });
});
