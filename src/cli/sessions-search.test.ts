import { describe, expect, it } from "vitest";
import type { SearchReport } from "../sessions/search.js";
import { localTime, renderSearchReport } from "./sessions-search.js";

const TS = "2026-02-01T09:05:00.000Z";
const report = (hits: SearchReport["hits"], limited = false): SearchReport => ({
  query: "deploy",
  regex: false,
  limit: 20,
  hits,
  limited,
  transcripts: 2,
  bytesRead: 100,
  store: "/s/sessions.json",
});
const hit: SearchReport["hits"][number] = {
  sessionKey: "main",
  sessionId: "s1",
  current: false,
  entryId: "e1",
  ts: TS,
  role: "user",
  snippet: { text: "we deploy today", start: 3, end: 9 },
};

describe("sessions search report", () => {
  it("marks the match bold and inverse on a colour terminal only", () => {
    const tty = renderSearchReport(report([hit], true), true, true);
    expect(tty).toBe(
      `1 hit for \u201cdeploy\u201d, newest first (stopped at --limit 20; there may be more)\n\n${localTime(TS)}  main  user  s1  (earlier session)\n  we \u001b[1;7mdeploy\u001b[0m today\n`,
    );
    expect(renderSearchReport(report([hit]), true, false)).toContain("\n  we deploy today\n");
    expect(renderSearchReport(report([hit]), false, false)).toBe(`${TS}\tmain\ts1\tuser\twe deploy today\n`);
  });

  it("says so when nothing matched", () => {
    expect(renderSearchReport(report([]), false, false)).toBe(
      "no hits for \u201cdeploy\u201d in 2 transcripts (store /s/sessions.json)\n",
    );
  });
});
