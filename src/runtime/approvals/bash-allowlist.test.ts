import { describe, expect, it } from "vitest";
import { allowedBy, hasShellMetacharacter, matchesEntry } from "./bash-allowlist.js";

describe("matchesEntry", () => {
  it.each([
    // exact entries
    ["git status", "git status", true],
    ["git status", "  git status  ", true],
    ["git status", "git status --short", false],
    ["git status", "git statu", false],
    ["ls | wc -l", "ls | wc -l", true],
    // prefix patterns
    ["git status*", "git status", true],
    ["git status*", "git status --short", true],
    ["git status*", "git log", false],
    ["npm test*", "npm test -- --run", true],
    ["*", "anything", false],
    ["  *", "anything", false],
    ["", "", false],
    ["git status", "", false],
    // a metacharacter never matches a prefix pattern
    ["git status*", "git status; rm -rf ~", false],
    ["git status*", "git status && rm -rf ~", false],
    ["git status*", "git status || rm -rf ~", false],
    ["git status*", "git status | sh", false],
    ["git status*", "git status > /etc/passwd", false],
    ["git status*", "git status >> f", false],
    ["git status*", "git status < f", false],
    ["git status*", "git status & rm -rf ~", false],
    ["git status*", "git status\nrm -rf ~", false],
    ["git status*", "git status\rrm -rf ~", false],
    ["git status*", "git status $(rm -rf ~)", false],
    ["git status*", "git status `rm -rf ~`", false],
    ["git status*", "git status <(rm -rf ~)", false],
    // a `*` inside an entry is literal
    ["ls *.txt", "ls a.txt", false],
    ["ls *.txt", "ls *.txt", true],
  ])("%j matches %j: %s", (entry, command, expected) => {
    expect(matchesEntry(entry, command)).toBe(expected);
  });
});

describe("hasShellMetacharacter", () => {
  it.each([
    ["git status", false],
    ["echo $HOME", false],
    ["a;b", true],
    ["a&&b", true],
    ["a|b", true],
    ["a>b", true],
    ["a<b", true],
    ["a &", true],
    ["a\nb", true],
    ["$(x)", true],
    ["`x`", true],
  ])("%j: %s", (command, expected) => {
    expect(hasShellMetacharacter(command)).toBe(expected);
  });
});

describe("allowedBy", () => {
  it("names the first entry that matches, or none", () => {
    const entries = ["ls", "git status*", "git status --short"];
    expect(allowedBy(entries, "git status --short")).toBe("git status*");
    expect(allowedBy(entries, "ls")).toBe("ls");
    expect(allowedBy(entries, "ls -la")).toBeUndefined();
    expect(allowedBy(entries, "git status; ls")).toBeUndefined();
    expect(allowedBy([], "ls")).toBeUndefined();
  });
});
