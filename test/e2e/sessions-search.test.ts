import { mkdir, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, type Json } from "./harness.js";

/**
 * `clawdis sessions search` and `GET /api/search` (issue 34, part 2) through the real binary: hand-written
 * transcripts searched with no gateway running (every flag, a match inside a JSON-escaped string, no hits), then
 * a real turn searched while the gateway runs, by the CLI and over the API (401 without the token).
 */
describe("e2e: searching the transcripts", () => {
  afterEach(cleanupAll);

  const T0 = Date.parse("2026-02-01T09:00:00Z");
  const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
  const header = (id: string, key: string) =>
    JSON.stringify({ type: "session", version: 1, id, sessionKey: key, createdAt: at(0) });
  const message = (id: string, minutes: number, role: string, content: string) =>
    JSON.stringify({ type: "message", id, ts: at(minutes), message: { role, content } });

  async function transcript(state: E2eState, id: string, lines: string[], minutes: number): Promise<void> {
    const path = state.transcriptPath(id);
    await mkdir(join(state.dir, "sessions"), { recursive: true });
    await writeFile(path, `${lines.join("\n")}\n`);
    await utimes(path, (T0 + minutes * 60_000) / 1000, (T0 + minutes * 60_000) / 1000);
  }

  type Hit = {
    sessionKey: string | null;
    sessionId: string;
    current: boolean;
    entryId: string;
    role: string;
  };
  const hitsOf = (stdout: string) => (JSON.parse(stdout) as { hits: Hit[] }).hits.map((h) => h.entryId);

  it("searches with no gateway running: order, flags, escaped text, no hits", async () => {
    const state = await E2eState.create();
    await state.writeStore({ main: { sessionId: "s-new", updatedAt: T0 } });
    await transcript(
      state,
      "s-old",
      [
        header("s-old", "main"),
        message("o1", 1, "user", "deploy the site"),
        message("o2", 2, "assistant", "Deploy done"),
      ],
      2,
    );
    await transcript(
      state,
      "s-new",
      [
        header("s-new", "main"),
        message("n1", 10, "user", 'she said "ship it"\nthen DEPLOY'),
        message("n2", 11, "tool", "deploy log: ok"),
      ],
      11,
    );
    await transcript(
      state,
      "s-grp",
      [header("s-grp", "group:42"), message("g1", 5, "user", "deploy in the group")],
      5,
    );

    // Piped: one tab-separated line per hit, newest file first, newest line first, no marks.
    const plain = await state.cli(["sessions", "search", "deploy"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout.trim().split("\n")).toEqual([
      `${at(11)}\tmain\ts-new\ttool\tdeploy log: ok`,
      `${at(10)}\tmain\ts-new\tuser\tshe said "ship it" then DEPLOY`,
      `${at(5)}\tgroup:42\ts-grp\tuser\tdeploy in the group`,
      `${at(2)}\tmain\ts-old\tassistant\tDeploy done`,
      `${at(1)}\tmain\ts-old\tuser\tdeploy the site`,
    ]);
    expect(plain.stdout).not.toContain("\u001b[");

    const json = await state.cli(["sessions", "search", "deploy", "--json"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as { hits: Hit[]; limited: boolean; transcripts: number };
    expect(report.hits.map((h) => [h.sessionKey, h.sessionId, h.current, h.role])).toEqual([
      ["main", "s-new", true, "tool"],
      ["main", "s-new", true, "user"],
      ["group:42", "s-grp", false, "user"],
      ["main", "s-old", false, "assistant"],
      ["main", "s-old", false, "user"],
    ]);
    expect(report).toMatchObject({ limited: false, transcripts: 3 });

    const flags: Array<[string[], string[]]> = [
      [["--key", "group:42"], ["g1"]],
      [
        ["--key", "main", "--role", "user"],
        ["n1", "o1"],
      ],
      [
        ["--limit", "2"],
        ["n2", "n1"],
      ],
      [
        ["--since", at(4)],
        ["n2", "n1", "g1"],
      ],
    ];
    for (const [extra, expected] of flags) {
      const run = await state.cli(["sessions", "search", "deploy", "--json", ...extra]);
      expect([run.code, hitsOf(run.stdout)], extra.join(" ")).toEqual([0, expected]);
    }
    const regex = await state.cli(["sessions", "search", "--json", "--regex", "^deploy (the|log)"]);
    expect(hitsOf(regex.stdout)).toEqual(["n2", "o1"]);
    // Stored as `said \"ship it\"\nthen`: found as it reads.
    const escaped = await state.cli(["sessions", "search", "--json", 'said "ship it"\nthen']);
    expect(hitsOf(escaped.stdout)).toEqual(["n1"]);

    const none = await state.cli(["sessions", "search", "kumquat"]);
    expect(none).toMatchObject({ code: 0, stderr: "" });
    expect(none.stdout).toBe(`no hits for \u201ckumquat\u201d in 3 transcripts (store ${state.storePath})\n`);
    const bad = await state.cli(["sessions", "search", "--regex", "a(b"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("not a valid regular expression");
    const badRole = await state.cli(["sessions", "search", "x", "--role", "system"]);
    expect([badRole.code, badRole.stderr]).toEqual([2, expect.stringContaining("role must be one of")]);
  });

  it("searches a live gateway's sessions, from the CLI and over GET /api/search with the token", async () => {
    const state = await E2eState.create();
    const gw = await state.startGateway();
    state.fake.enqueue({ text: "Kumquat noted." });
    const reply = await gw.agent("remember the kumquat tree");
    expect(reply.status).toBe(200);

    const cli = await state.cli(["sessions", "search", "kumquat", "--json"]);
    expect(cli.code).toBe(0);
    const fromCli = JSON.parse(cli.stdout) as { hits: Hit[] };
    expect(fromCli.hits.map((h) => [h.sessionKey, h.role, h.current])).toEqual([
      ["main", "assistant", true],
      ["main", "user", true],
    ]);

    const api = await gw.call<Json>("GET", "/api/search?q=KUMQUAT&role=user");
    expect(api.status).toBe(200);
    expect((api.body.hits as Hit[]).map((h) => [h.entryId, h.role])).toEqual([
      [fromCli.hits[1]!.entryId, "user"],
    ]);
    expect(api.body).toMatchObject({ query: "KUMQUAT", limited: false, store: state.storePath });
    const limited = await gw.call<Json>("GET", "/api/search?q=kumquat&limit=1");
    expect(limited.body).toMatchObject({ limited: true, hits: [{ role: "assistant" }] });
    expect((await gw.call<Json>("GET", "/api/search?q=x&since=soon")).status).toBe(400);
    expect((await gw.call<Json>("GET", "/api/search")).status).toBe(400);

    const anonymous = await fetch(`${gw.url}/api/search?q=kumquat`);
    expect(anonymous.status).toBe(401);
    const wrong = await fetch(`${gw.url}/api/search?q=kumquat`, {
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.status).toBe(401);
  });
});
