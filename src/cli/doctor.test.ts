import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { makeHeader, readTranscript } from "../sessions/transcript.js";
import { runDoctor } from "./doctor.js";
import { recordingIO } from "./io.js";

let state: string;
let sessions: string;
let storePath: string;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), "clawdis-doctor-"));
  sessions = join(state, "sessions");
  storePath = join(sessions, "sessions.json");
});
afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

/** The model endpoint doctor asks when no gateway runs (it lists test-model and fake-model). */
let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  fake.models.unshift("test-model");
});
afterAll(async () => {
  await fake.close();
});

/** `clawdis doctor` with a model named in the environment (the model check has its own test). */
async function doctor(
  fix = false,
  json = false,
  env: Record<string, string> = { OPENAI_MODEL: "test-model", OPENAI_BASE_URL: fake.url },
): Promise<{ code: number; out: string; err: string }> {
  const io = recordingIO({ CLAWDIS_STATE_DIR: state, HOME: state, ...env });
  const code = await runDoctor({ fix, json }, io);
  return { code, out: io.out, err: io.err };
}

/** As the gateway writes them: files 0600, folders 0700 (whatever the umask of the test run). */
const PRIVATE_FILE = { mode: 0o600 } as const;
const PRIVATE_DIR = { recursive: true, mode: 0o700 } as const;

const T0 = Date.UTC(2026, 0, 1);

function headerLine(id: string, key: string): string {
  return JSON.stringify(makeHeader(id, key, new Date(T0)));
}

function messageLine(text: string, id = `e-${text}`): string {
  return JSON.stringify({
    type: "message",
    id,
    ts: "2026-01-01T00:01:00.000Z",
    message: { role: "user", content: text },
  });
}

async function writeTranscript(id: string, lines: string[], mtimeMs?: number): Promise<string> {
  await mkdir(sessions, PRIVATE_DIR);
  const path = join(sessions, `${id}.jsonl`);
  await writeFile(path, `${lines.join("\n")}\n`, PRIVATE_FILE);
  if (mtimeMs !== undefined) await utimes(path, mtimeMs / 1000, mtimeMs / 1000);
  return path;
}

async function writeStore(map: Record<string, unknown>): Promise<void> {
  await mkdir(sessions, PRIVATE_DIR);
  await writeFile(storePath, `${JSON.stringify(map, null, 2)}\n`, PRIVATE_FILE);
}

async function snapshot(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const name of (await readdir(sessions)).sort())
    files[name] = await readFile(join(sessions, name), "utf8");
  return files;
}

describe("clawdis doctor", () => {
  it("finds nothing wrong on a fresh machine", async () => {
    const { code, out } = await doctor();
    expect(code).toBe(0);
    expect(out).toContain("✓ no config at");
    expect(out).toContain("does not exist yet");
    expect(out).toContain("doctor: no problems found");
  });

  it("passes a healthy state, counting an archived transcript as normal", async () => {
    await writeFile(
      join(state, "clawdis.json"),
      "{ inbound: { reply: { session: { idleMinutes: 30 } } } }",
      PRIVATE_FILE,
    );
    await writeStore({
      main: { sessionId: "s1", updatedAt: T0, lastInteractionAt: T0 },
      "group:-1001234": { sessionId: "g1", updatedAt: T0 },
    });
    await writeTranscript("s0", [headerLine("s0", "main"), messageLine("old")]);
    await writeTranscript("s1", [headerLine("s1", "main"), messageLine("hi")]);
    const { code, out } = await doctor();
    expect(out).toMatch(/✓ config .*clawdis\.json is valid/);
    expect(out).toContain("✓ store");
    expect(out).toContain("1 transcript belongs to its entry; 1 archived");
    expect(out).toContain("parses (2 sessions)");
    expect(out).toContain('- entry "group:-1001234": no transcript yet');
    expect(out).not.toContain("✗");
    expect(code).toBe(0);
  });

  it("reports a bad config with exit 1 and does not repair sessions then", async () => {
    await writeFile(
      join(state, "clawdis.json"),
      "{ inbound: { reply: { session: { idleMinutes: 'soon' } } } }",
      PRIVATE_FILE,
    );
    await writeStore({ main: { sessionId: "../escape", updatedAt: T0 } });
    const before = await snapshot();
    const { code, out } = await doctor(true);
    expect(code).toBe(1);
    expect(out).toMatch(/✗ config: .*idleMinutes/s);
    expect(out).toContain("sessions are not repaired until the config is valid");
    expect(out).toContain('✗ entry "main"');
    expect(await snapshot()).toEqual(before);
  });

  it("reports every kind of problem, changes nothing without --fix, and repairs with it", async () => {
    await writeStore({
      main: { sessionId: "s1", updatedAt: T0, lastInteractionAt: T0, thinkingLevel: "high" },
      bad: { sessionId: "../../etc/passwd", updatedAt: T0 },
      "group:a": { sessionId: "ga", updatedAt: T0, lastInteractionAt: T0 },
      c: { sessionId: "s3", updatedAt: T0, lastInteractionAt: T0 },
      stamp: { sessionId: "s4", updatedAt: "yesterday" },
    });
    const s1 = await writeTranscript("s1", [
      headerLine("s1", "main"),
      messageLine("one"),
      "garbage {",
      messageLine("two"),
      '{"type":"message","id":"cut","mess',
    ]);
    await writeTranscript("s3", ["not a header", messageLine("three")]);
    await writeTranscript("s4", [headerLine("s4", "stamp")]);
    await writeTranscript("gb-old", [headerLine("gb-old", "group:b"), messageLine("b1")], T0);
    await writeTranscript("gb-new", [headerLine("gb-new", "group:b"), messageLine("b2")], T0 + 60_000);
    const original = await snapshot();

    const check = await doctor();
    expect(check.code).toBe(1);
    expect(check.out).toContain('✗ entry "bad": sessionId');
    expect(check.out).toContain('✗ entry "group:a": transcript ga.jsonl is missing');
    expect(check.out).toContain('✗ entry "stamp": updatedAt "yesterday" is not a number');
    expect(check.out).toContain('✗ key "group:b" has no entry but 2 transcripts: gb-new.jsonl, gb-old.jsonl');
    expect(check.out).toContain(`✗ transcript ${s1}: 2 malformed lines: 3, 5`);
    expect(check.out).toMatch(/✗ transcript .*s3\.jsonl: bad header/);
    expect(check.out).toContain(
      "doctor: 6 problems found (run `clawdis doctor --fix` to repair what can be repaired)",
    );
    expect(await snapshot()).toEqual(original);

    const fixed = await doctor(true);
    expect(fixed.out).toContain("6 problems found, all fixed");
    expect(fixed.code).toBe(0);

    const store = JSON.parse(await readFile(storePath, "utf8"));
    expect(Object.keys(store).sort()).toEqual(["c", "group:b", "main", "stamp"]);
    expect(store.main).toEqual({
      sessionId: "s1",
      updatedAt: T0,
      lastInteractionAt: T0,
      thinkingLevel: "high",
    });
    expect(store["group:b"]).toMatchObject({ sessionId: "gb-new", updatedAt: T0 + 60_000, createdAt: T0 });
    expect(typeof store.stamp.updatedAt).toBe("number");

    const names = await readdir(sessions);
    const storeBackup = names.find((n) => n.startsWith("sessions.json.bak-"));
    expect(storeBackup).toBeDefined();
    expect(await readFile(join(sessions, storeBackup!), "utf8")).toBe(original["sessions.json"]);
    const s1Backup = names.find((n) => n.startsWith("s1.jsonl.bak-"));
    expect(await readFile(join(sessions, s1Backup!), "utf8")).toBe(original["s1.jsonl"]);

    const repaired = await readTranscript(s1);
    expect(repaired.badLines).toEqual([]);
    expect(repaired.entries.map((e) => e.id)).toEqual(["e-one", "e-two"]);
    expect(await readFile(s1, "utf8")).toBe(
      `${[headerLine("s1", "main"), messageLine("one"), messageLine("two")].join("\n")}\n`,
    );
    const s3 = await readTranscript(join(sessions, "s3.jsonl"));
    expect(s3.header).toEqual({ ...makeHeader("s3", "c", new Date("2026-01-01T00:01:00.000Z")) });
    expect(s3.entries.map((e) => e.id)).toEqual(["e-three"]);

    const again = await doctor();
    expect(again.out).toContain("doctor: no problems found");
    expect(again.out).toContain("1 archived");
    expect(again.code).toBe(0);
  });

  it("sets a store that does not parse aside and rebuilds it from transcript headers", async () => {
    await mkdir(sessions, PRIVATE_DIR);
    await writeFile(storePath, '{ "main": { "sessionId": "s1", ', PRIVATE_FILE);
    await writeTranscript("s1", [headerLine("s1", "main"), messageLine("hi")]);
    await writeTranscript("g1", [headerLine("g1", "group:-100"), messageLine("yo")]);

    const check = await doctor();
    expect(check.code).toBe(1);
    expect(check.out).toContain("does not parse");
    expect(check.out).toContain("transcript ownership not checked");
    expect(await readFile(storePath, "utf8")).toBe('{ "main": { "sessionId": "s1", ');

    const fixed = await doctor(true);
    expect(fixed.code).toBe(0);
    expect(fixed.out).toMatch(/✓ fixed: .*sessions\.json\.bad-/);
    const names = await readdir(sessions);
    const aside = names.find((n) => n.startsWith("sessions.json.bad-"));
    expect(await readFile(join(sessions, aside!), "utf8")).toBe('{ "main": { "sessionId": "s1", ');
    const store = JSON.parse(await readFile(storePath, "utf8"));
    expect(store.main.sessionId).toBe("s1");
    expect(store["group:-100"].sessionId).toBe("g1");
  });

  it("leaves a headerless transcript that no entry claims as a remaining problem", async () => {
    await writeStore({});
    const path = await writeTranscript("lost", [messageLine("x")]);
    const { code, out } = await doctor(true);
    expect(code).toBe(1);
    expect(out).toContain(`✗ transcript ${path} belongs to no entry and has no header`);
    expect(out).toContain("not repaired: line 1 is no header and no session key is known");
    expect(await readFile(path, "utf8")).toBe(`${messageLine("x")}\n`);
  });

  it("says 'all fixed' and exits 0 when one fix repairs two problems of one entry", async () => {
    await writeStore({
      main: { sessionId: "s1", updatedAt: T0, lastInteractionAt: T0 },
      "group:9": { sessionId: "nofile-1", updatedAt: "yesterday", lastInteractionAt: 1 },
    });
    await writeTranscript("s1", [headerLine("s1", "main"), messageLine("hi")]);
    const check = await doctor();
    expect(check.out).toContain("doctor: 2 problems found (run");
    const fixed = await doctor(true);
    expect(fixed.out).toContain('✓ fixed: removed entry "group:9" whose transcript is missing');
    expect(fixed.out).toContain("doctor: 2 problems found, all fixed\n");
    expect(fixed.code).toBe(0);
    expect((await doctor()).out).toContain("doctor: no problems found");
  });

  it("counts in the singular: 1 problem, 1 session, 1 malformed line", async () => {
    await writeStore({ main: { sessionId: "s1", updatedAt: T0, lastInteractionAt: T0 } });
    await writeTranscript("s1", [headerLine("s1", "main"), messageLine("one"), "garbage {"]);
    const { code, out } = await doctor();
    expect(code).toBe(1);
    expect(out).toContain("parses (1 session)");
    expect(out).toContain("1 transcript belongs to its entry");
    expect(out).toContain(": 1 malformed line: 3 (first:");
    expect(out).toContain("readers skip it");
    expect(out).toContain("doctor: 1 problem found (run `clawdis doctor --fix`");
    const fixed = await doctor(true);
    expect(fixed.out).toContain("dropped 1 bad line;");
    expect(fixed.out).toContain("doctor: 1 problem found, all fixed\n");
  });

  it("says so and exits 1 when --fix leaves a problem", async () => {
    await writeStore({
      a: { sessionId: "shared", updatedAt: T0, lastInteractionAt: T0 },
      b: { sessionId: "shared", updatedAt: T0, lastInteractionAt: T0 },
      stamp: { sessionId: "s4", updatedAt: "yesterday" },
    });
    await writeTranscript("shared", [headerLine("shared", "a")]);
    await writeTranscript("s4", [headerLine("s4", "stamp")]);
    const { code, out } = await doctor(true);
    expect(out).toContain("doctor: 2 problems found, 1 fixed, 1 remains\n");
    expect(code).toBe(1);
  });

  it("gives the line and column where the store stops being JSON", async () => {
    await mkdir(sessions, PRIVATE_DIR);
    await writeFile(
      storePath,
      '{\n  "main": { "sessionId": "s1", "updatedAt": 1 }\n  "b": {}\n}\n',
      PRIVATE_FILE,
    );
    const { out } = await doctor();
    expect(out).toContain(
      `✗ store ${storePath} does not parse: not valid JSON at line 3, column 3: expected ',' or '}', found '"'`,
    );
    expect(out).not.toContain("position");
  });

  it("--json prints one object and nothing else: every finding with its level, the counts, the exit code", async () => {
    await writeStore({ main: { sessionId: "s1", updatedAt: "yesterday", lastInteractionAt: T0 } });
    await writeTranscript("s1", [headerLine("s1", "main"), messageLine("hi")]);
    const check = await doctor(false, true);
    const report = JSON.parse(check.out);
    expect(check.code).toBe(1);
    expect(report).toMatchObject({ problems: 1, fixed: 0, remaining: 1, exitCode: 1, fix: false });
    expect(report.findings).toContainEqual({
      level: "problem",
      text: 'entry "main": updatedAt "yesterday" is not a number',
    });
    expect(report.findings).toContainEqual({ level: "ok", text: `store ${storePath} parses (1 session)` });
    // No approvals policy is set: said once, as a note.
    expect(
      report.findings.filter((f: { text: string }) => f.text.startsWith("tools run without asking")),
    ).toEqual([{ level: "note", text: expect.stringContaining("inbound.reply.agent.approvals is not set") }]);
    expect(new Set(report.findings.map((f: { level: string }) => f.level))).toEqual(
      new Set(["ok", "note", "problem"]),
    );
    expect(check.out).not.toContain("✗");

    const fixed = await doctor(true, true);
    const after = JSON.parse(fixed.out);
    expect(fixed.code).toBe(0);
    expect(after).toMatchObject({ problems: 1, fixed: 1, remaining: 0, exitCode: 0, fix: true });
    expect(after.findings).toContainEqual({ level: "fixed", text: 'entry "main": updatedAt set to now' });
    expect(after.findings.some((f: { level: string }) => f.level === "note")).toBe(true);

    const clean = JSON.parse((await doctor(false, true)).out);
    expect(clean).toMatchObject({ problems: 0, fixed: 0, remaining: 0, exitCode: 0 });
  });
});

describe("doctor: the model", () => {
  it("says when no model is configured, with the file to edit and an example (a problem: the agent cannot answer)", async () => {
    const { code, out } = await doctor(false, false, {});
    expect(out).toContain("✗ No model is configured: the agent cannot answer yet.");
    expect(out).toContain(`Put this in ${join(state, "clawdis.json")}`);
    expect(out).toContain('baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5:14b"');
    expect(code).toBe(1);
  });

  it("names the model, where it came from and that the endpoint answers (asked, GET /models)", async () => {
    const asked = fake.modelRequests.length;
    expect((await doctor()).out).toContain(
      `✓ model test-model (from env OPENAI_MODEL) at ${fake.url}, which answers`,
    );
    expect(fake.modelRequests.length).toBe(asked + 1);
  });

  it("with no model named, names the endpoint's only model, or says it lists several", async () => {
    fake.models.splice(0, fake.models.length, "only-one");
    try {
      const { out, code } = await doctor(false, false, { OPENAI_BASE_URL: fake.url });
      expect(out).toContain(`✓ no model named: the gateway uses only-one, the only model ${fake.url} lists`);
      expect(code).toBe(0);
      fake.models.push("another");
      const two = await doctor(false, false, { OPENAI_BASE_URL: fake.url });
      expect(two.out).toContain(`✗ no model named and ${fake.url} lists 2 models`);
      expect(two.code).toBe(1);
    } finally {
      fake.models.splice(0, fake.models.length, "test-model", "fake-model");
    }
  });

  it("an endpoint that does not answer is a problem naming it and the error, not a ✓", async () => {
    // A port nothing listens on any more: the connection is refused.
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, "127.0.0.1", done));
    const { port } = closed.address() as AddressInfo;
    await new Promise((done) => closed.close(done));
    const endpoint = `http://127.0.0.1:${port}/v1`;
    const { out, code } = await doctor(false, false, {
      OPENAI_MODEL: "test-model",
      OPENAI_BASE_URL: endpoint,
    });
    expect(out).toContain(
      `✗ model test-model (from env OPENAI_MODEL): the endpoint ${endpoint} does not answer GET /models: the connection was refused: is the server running?`,
    );
    expect(out).not.toMatch(/✓ model/);
    expect(code).toBe(1);
  });

  it("a model the endpoint does not list is a problem", async () => {
    const { out, code } = await doctor(false, false, { OPENAI_MODEL: "nope", OPENAI_BASE_URL: fake.url });
    expect(out).toContain(
      `✗ model nope (from env OPENAI_MODEL) is not in the list of ${fake.url} (test-model, fake-model)`,
    );
    expect(code).toBe(1);
  });
});

describe("doctor: a running gateway that has no config file", () => {
  it("says it runs on the defaults (never 'which is gone now'), and takes the model from the gateway", async () => {
    // What a gateway started without a file answers at GET /api/status (its config digest is null).
    const configFile = join(state, "clawdis.json");
    const body = {
      pid: process.pid,
      config: { path: configFile, sha256: null, appliedAt: 1 },
      transports: [{ id: "webchat", state: "ok", restarts: 0 }],
      model: {
        configured: true,
        name: "env-model",
        source: "env OPENAI_MODEL",
        baseUrl: fake.url,
        endpointSource: "env OPENAI_BASE_URL",
        reachable: true,
        checkedAt: Date.now(),
      },
    };
    const server = createHttpServer((req, res) => {
      const ok = req.url === "/api/status" && req.headers.authorization === "Bearer gateway-token-0123456789";
      res.writeHead(ok ? 200 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify(ok ? body : { error: "unauthorized" }));
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await mkdir(state, PRIVATE_DIR);
      await writeFile(join(state, "gateway.token"), "gateway-token-0123456789\n", PRIVATE_FILE);
      await writeFile(
        join(state, "gateway.json"),
        JSON.stringify({ pid: process.pid, url, startedAt: 1 }),
        PRIVATE_FILE,
      );
      // doctor's own environment names no model: only the gateway knows it.
      const { out } = await doctor(false, false, {});
      expect(out).toContain(
        `✓ the running gateway (pid ${process.pid}) runs on every default: there is no config file at ${configFile}`,
      );
      expect(out).not.toContain("gone now");
      expect(out).not.toContain("No model is configured");
      expect(out).toContain(`✓ the running gateway (pid ${process.pid}): webchat ok`);
      expect(out).toContain("the running gateway uses model env-model (from env OPENAI_MODEL)");
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
