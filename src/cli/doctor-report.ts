import type { DoctorReport } from "./doctor-journal.js";
import { EXIT } from "./io.js";
import { count } from "./plural.js";

/** `ok` fine, `note` worth knowing, `problem` wrong, `fixed` repaired by `--fix`. */
export type FindingLevel = "ok" | "note" | "problem" | "fixed";

export interface Finding {
  level: FindingLevel;
  text: string;
}

const MARK: Record<FindingLevel, string> = { ok: "✓ ", note: "- ", problem: "✗ ", fixed: "✓ fixed: " };

/** One finding as doctor prints it: `✓ …`, `- …`, `✗ …`, `✓ fixed: …`. */
export function formatFinding(finding: Finding): string {
  return `${MARK[finding.level]}${finding.text}`;
}

/**
 * Collects doctor's findings in order. With `print`, each is printed (one line, see formatFinding) as it is
 * found; without, it is only kept (for `--json`, and for the silent re-check after `--fix`).
 */
export class DoctorFindings implements DoctorReport {
  readonly findings: Finding[] = [];
  problems = 0;
  constructor(private readonly print?: (text: string) => void) {}

  ok(text: string): void {
    this.add({ level: "ok", text });
  }
  note(text: string): void {
    this.add({ level: "note", text });
  }
  problem(text: string): void {
    this.problems += 1;
    this.add({ level: "problem", text });
  }
  repaired(text: string): void {
    this.add({ level: "fixed", text });
  }

  private add(finding: Finding): void {
    this.findings.push(finding);
    this.print?.(`${formatFinding(finding)}\n`);
  }
}

export interface DoctorSummary {
  /** Problems the check found. */
  problems: number;
  /** Of those, how many `--fix` repaired: found minus what a check after the repairs still finds. */
  fixed: number;
  /** What is still wrong: the problems found without `--fix`; with it, what the check after the repairs found. */
  remaining: number;
  /** 0 when nothing remains, 1 otherwise. */
  exitCode: number;
}

/**
 * The counts and the exit code. Pure. `remaining` is not computed from the repairs doctor believes it made: with
 * `--fix` it is what a second check finds, so "all fixed" and exit 0 are only said when nothing is left.
 */
export function summarize(problems: number, remaining: number): DoctorSummary {
  const fixed = Math.max(0, problems - remaining);
  return { problems, fixed, remaining, exitCode: remaining > 0 ? EXIT.failed : EXIT.ok };
}

/** The last line: `doctor: no problems found`, `doctor: 1 problem found, all fixed`, … Pure. */
export function summaryLine(summary: DoctorSummary, fixRan: boolean): string {
  const found = count(summary.problems, "problem");
  if (summary.problems === 0 && summary.remaining === 0) return "doctor: no problems found";
  if (!fixRan) {
    return `doctor: ${found} found (run \`clawdis doctor --fix\` to repair what can be repaired)`;
  }
  if (summary.remaining === 0) return `doctor: ${found} found, all fixed`;
  const remain = `${summary.remaining} ${summary.remaining === 1 ? "remains" : "remain"}`;
  return `doctor: ${found} found, ${summary.fixed} fixed, ${remain}`;
}

/** `clawdis doctor --json`: one object, everything doctor found and decided. */
export interface DoctorJson extends DoctorSummary {
  fix: boolean;
  findings: Finding[];
}

export function doctorJson(findings: Finding[], summary: DoctorSummary, fixRan: boolean): DoctorJson {
  return { ...summary, fix: fixRan, findings };
}
