import { describe, expect, it } from "vitest";
import { DoctorFindings, doctorJson, summarize, summaryLine } from "./doctor-report.js";

describe("summaryLine", () => {
  const hint = "(run `clawdis doctor --fix` to repair what can be repaired)";
  it.each<[number, number, boolean, string]>([
    [0, 0, false, "doctor: no problems found"],
    [0, 0, true, "doctor: no problems found"],
    [1, 1, false, `doctor: 1 problem found ${hint}`],
    [2, 2, false, `doctor: 2 problems found ${hint}`],
    [1, 0, true, "doctor: 1 problem found, all fixed"],
    [5, 0, true, "doctor: 5 problems found, all fixed"],
    [3, 1, true, "doctor: 3 problems found, 2 fixed, 1 remains"],
    [3, 2, true, "doctor: 3 problems found, 1 fixed, 2 remain"],
    [2, 2, true, "doctor: 2 problems found, 0 fixed, 2 remain"],
  ])("%i found, %i remaining, fix %s", (found, remaining, fix, line) => {
    expect(summaryLine(summarize(found, remaining), fix)).toBe(line);
  });

  it("exits 0 only when nothing remains; never counts more fixed than found", () => {
    expect(summarize(2, 0)).toEqual({ problems: 2, fixed: 2, remaining: 0, exitCode: 0 });
    expect(summarize(2, 1).exitCode).toBe(1);
    expect(summarize(1, 3)).toEqual({ problems: 1, fixed: 0, remaining: 3, exitCode: 1 });
  });
});

describe("DoctorFindings", () => {
  it("prints each finding with its mark as it comes, or only keeps it", () => {
    let printed = "";
    const shown = new DoctorFindings((t) => {
      printed += t;
    });
    const quiet = new DoctorFindings();
    for (const r of [shown, quiet]) {
      r.ok("a");
      r.note("b");
      r.problem("c");
      r.repaired("d");
    }
    expect(printed).toBe("✓ a\n- b\n✗ c\n✓ fixed: d\n");
    expect(quiet.problems).toBe(1);
    expect(doctorJson(quiet.findings, summarize(1, 0), true)).toEqual({
      problems: 1,
      fixed: 1,
      remaining: 0,
      exitCode: 0,
      fix: true,
      findings: [
        { level: "ok", text: "a" },
        { level: "note", text: "b" },
        { level: "problem", text: "c" },
        { level: "fixed", text: "d" },
      ],
    });
  });
});
