import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  closestMatch,
  editDistance,
  formatConfigIssues,
  formatJson5SyntaxError,
  formatPath,
  formatValue,
} from "./config-errors.js";

describe("formatPath", () => {
  it.each([
    [[], "(top level)"],
    [["inbound", "reply", "session", "idleMinutes"], "inbound.reply.session.idleMinutes"],
    [["inbound", "allowFrom", 2], "inbound.allowFrom[2]"],
    [["webhooks", "build-alerts", "token"], "webhooks.build-alerts.token"],
    [["plugins", "entries", "@scope/x", "enabled"], 'plugins.entries["@scope/x"].enabled'],
    [["$schema"], "$schema"],
  ])("%j -> %s", (path, expected) => {
    expect(formatPath(path)).toBe(expected);
  });
});

describe("formatValue", () => {
  it.each([
    ["soon", '"soon"'],
    [5, "5"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [Number.NaN, "NaN"],
    [null, "null"],
    [undefined, "nothing"],
    [[1, "a"], '[1,"a"]'],
    [{ a: 1 }, '{"a":1}'],
    ["line\nbreak", '"line\\nbreak"'],
  ])("%j", (value, expected) => {
    expect(formatValue(value)).toBe(expected);
  });

  it("shortens long values to 60 characters", () => {
    const shown = formatValue("x".repeat(500));
    expect(shown).toHaveLength(60);
    expect(shown.endsWith("…")).toBe(true);
    expect(shown.startsWith('"xxx')).toBe(true);
  });
});

describe("editDistance / closestMatch", () => {
  it.each([
    ["port", "port", 0],
    ["prot", "port", 1],
    ["idleMinute", "idleMinutes", 1],
    ["kitten", "sitting", 3],
    ["", "abc", 3],
  ])("%s vs %s = %d", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });

  it("suggests close keys, ignoring case, '_' and '-'", () => {
    expect(closestMatch("prot", ["port", "bind"])).toBe("port");
    expect(closestMatch("idle_minutes", ["scope", "idleMinutes"])).toBe("idleMinutes");
    expect(closestMatch("IdleMinutes", ["idleMinutes"])).toBe("idleMinutes");
    expect(closestMatch("per_sender", ["per-sender", "global"])).toBe("per-sender");
  });

  it("suggests nothing when no key is close", () => {
    expect(closestMatch("xyz", ["port", "bind"])).toBeUndefined();
    expect(closestMatch("apitoken", ["botToken", "apiRoot", "allowFrom"])).toBeUndefined();
    expect(closestMatch("a", [])).toBeUndefined();
  });
});

describe("formatJson5SyntaxError", () => {
  const syntaxError = (text: string): unknown => {
    try {
      JSON5.parse(text);
    } catch (error) {
      return error;
    }
    throw new Error("expected a syntax error");
  };

  it("names file, line, column and reason, and points at the spot", () => {
    const text = "{\n  a: 1,\n    x y\n}";
    const message = formatJson5SyntaxError(syntaxError(text), text, "clawdis.json");
    const [head, source, caret] = message.split("\n");
    expect(head).toBe("clawdis.json: JSON5 syntax error at line 3, column 7: invalid character 'y'");
    expect(source).toBe("  3 |     x y");
    expect(caret?.indexOf("^")).toBe(source?.indexOf("y"));
  });

  it("reports an unexpected end of input", () => {
    const text = '{ a: "open';
    expect(formatJson5SyntaxError(syntaxError(text), text, "c.json")).toMatch(
      /^c\.json: JSON5 syntax error at line 1, column 11: invalid end of input/,
    );
  });

  it("keeps the caret on a very long line", () => {
    const text = `{ a: "${"x".repeat(300)}" b }`;
    const message = formatJson5SyntaxError(syntaxError(text), text, "c.json");
    const [, source, caret] = message.split("\n");
    expect(source!.length).toBeLessThan(120);
    expect(source![caret!.indexOf("^")]).toBe("b");
  });

  it("copes with an error that has no position", () => {
    expect(formatJson5SyntaxError(new Error("boom"), "", "c.json")).toBe("c.json: JSON5 syntax error: boom");
  });
});

describe("formatConfigIssues", () => {
  const schema = z.strictObject({
    server: z.strictObject({ port: z.number().int().min(1).default(80) }).default({ port: 80 }),
    mode: z.enum(["fast", "slow"]).default("fast"),
  });
  const problems = (text: string): string[] => {
    const input = JSON5.parse(text);
    const result = schema.safeParse(input);
    if (result.success) throw new Error("expected issues");
    return formatConfigIssues(result.error.issues, input, text, "/some/dir/app.json", schema);
  };

  it("sorts problems by line and uses the file's base name", () => {
    const text = '{\n  mode: "fsat",\n  server: {\n    port: 0,\n    hots: 1,\n  },\n}';
    expect(problems(text)).toEqual([
      'mode: expected one of "fast", "slow", got "fsat" (app.json line 2) — did you mean "fast"?',
      "server.port: expected an integer >= 1, got 0 (app.json line 4)",
      "server.hots: unknown key (app.json line 5) — known keys here: port",
    ]);
  });

  it("points a key written at the wrong level to where it belongs", () => {
    expect(problems("{\n port: 8080 }")).toEqual([
      "port: unknown key (app.json line 2) — it belongs at server.port",
    ]);
  });

  it("reports a key written twice, at its last line, among the other problems in file order", () => {
    const text = '{\n  server: {\n    port: 0,\n  },\n  mode: "fast",\n  mode: "slow",\n  mode: "fast",\n}';
    expect(problems(text)).toEqual([
      "server.port: expected an integer >= 1, got 0 (app.json line 3)",
      "mode: duplicate key (app.json line 7; also lines 5, 6) — only the last one would count: keep one",
    ]);
  });

  it("reports duplicates alone when the schema has no issue", () => {
    const text = "{ server: {\n port: 1,\n port: 2 } }";
    expect(formatConfigIssues([], JSON5.parse(text), text, "app.json", schema)).toEqual([
      "server.port: duplicate key (app.json line 3; also line 2) — only the last one would count: keep one",
    ]);
  });
});
