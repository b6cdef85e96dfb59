import { describe, expect, it } from "vitest";
import { buildSessionsReport, parseActiveMinutes, sessionKind } from "./sessions-report.js";

describe("sessionKind", () => {
  it.each([
    ["main", "direct"],
    ["group:12036302@g.us", "group"],
    ["group:-1001234", "group"],
    ["global", "global"],
    ["globally", "direct"],
    ["groups", "direct"],
  ])("%s -> %s", (key, kind) => {
    expect(sessionKind(key)).toBe(kind);
  });
});

describe("parseActiveMinutes", () => {
  it.each([
    [undefined, null],
    ["30", 30],
    ["1.5", 1.5],
  ])("%j -> %j", (value, minutes) => {
    expect(parseActiveMinutes(value)).toBe(minutes);
  });

  it.each(["0", "-5", "abc", "", " ", "Infinity", "NaN", "1e999"])("refuses %j", (value) => {
    const result = parseActiveMinutes(value);
    expect(result).toBeInstanceOf(Error);
    expect((result as Error).message).toContain(JSON.stringify(value));
  });
});

describe("buildSessionsReport", () => {
  const now = 10_000_000;
  const map = {
    old: { sessionId: "o", updatedAt: now - 120 * 60_000 },
    main: { sessionId: "m", updatedAt: now - 60_000, model: "gpt", kind: "stored kind is shadowed" },
    "group:1": { sessionId: "g", updatedAt: now - 60_000 },
    future: { sessionId: "f", updatedAt: now + 5000 },
  };

  it("lists newest first, ties by key, with kind and age, keeping other fields", () => {
    const report = buildSessionsReport(map, "/s.json", now, null);
    expect(report.path).toBe("/s.json");
    expect(report.count).toBe(4);
    expect(report.activeMinutes).toBeNull();
    expect(report.sessions.map((s) => s.key)).toEqual(["future", "group:1", "main", "old"]);
    expect(report.sessions[2]).toEqual({
      key: "main",
      kind: "direct",
      sessionId: "m",
      updatedAt: now - 60_000,
      ageMs: 60_000,
      model: "gpt",
    });
    expect(Object.keys(report.sessions[2]!).slice(0, 5)).toEqual([
      "key",
      "kind",
      "sessionId",
      "updatedAt",
      "ageMs",
    ]);
    expect(report.sessions[0]?.ageMs).toBe(0);
  });

  it("with the gateway's phases, a loaded session's row carries its phase; others have none", () => {
    const stored = { ...map, old: { ...map.old, phase: "a stored field is not the gateway's word" } };
    const phases: Record<string, "processing" | "ready"> = { main: "processing", "group:1": "ready" };
    const report = buildSessionsReport(stored, "/s.json", now, null, (key) => phases[key]);
    expect(Object.fromEntries(report.sessions.map((s) => [s.key, s.phase]))).toEqual({
      future: undefined,
      "group:1": "ready",
      main: "processing",
      old: undefined,
    });
    expect(report.sessions.map((s) => "phase" in s)).toEqual([false, true, true, false]);
    expect("phase" in buildSessionsReport(map, "/s.json", now, null).sessions[2]!).toBe(false);
  });

  it("keeps only sessions updated within activeMinutes (inclusive)", () => {
    const report = buildSessionsReport(map, "/s.json", now, 1);
    expect(report.sessions.map((s) => s.key)).toEqual(["future", "group:1", "main"]);
    expect(report.count).toBe(3);
    expect(report.activeMinutes).toBe(1);
  });
});
