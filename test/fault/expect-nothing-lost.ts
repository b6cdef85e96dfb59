import { expect } from "vitest";
import type { Audit } from "./ledger.js";

/** The promise every scenario checks (soft, so one run reports all three): 0 lost, 0 answered twice, 0 torn. */
export function expectNothingLost(audit: Audit): void {
  expect.soft(audit.lost, "acknowledged and never answered").toEqual([]);
  expect.soft(audit.twice, "answered twice").toEqual([]);
  expect.soft(audit.torn, "torn transcript lines").toEqual([]);
}
