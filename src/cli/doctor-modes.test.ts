import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { runDoctor } from "./doctor.js";
import { findWideModes, isTooOpen, octal, tightenedMode } from "./doctor-modes.js";
import { recordingIO } from "./io.js";

describe("isTooOpen / tightenedMode", () => {
  it.each<[number, boolean, number]>([
    [0o600, false, 0o600],
    [0o400, false, 0o400],
    [0o700, false, 0o700],
    [0o644, true, 0o600],
    [0o640, true, 0o600],
    [0o604, true, 0o600],
    [0o666, true, 0o600],
    [0o755, true, 0o700],
    [0o750, true, 0o700],
    [0o711, true, 0o700],
    [0o777, true, 0o700],
    [0o100644, true, 0o600],
  ])("mode %d: too open %s, tightened to %d", (mode, open, tight) => {
    expect(isTooOpen(mode)).toBe(open);
    expect(tightenedMode(mode)).toBe(tight);
  });

  it("writes modes as people do", () => {
    expect(octal(0o100644)).toBe("0644");
    expect(octal(0o700)).toBe("0700");
  });
});

let root: string;
let state: string;
let outside: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "clawdis-modes-"));
  state = join(root, "state");
  outside = join(root, "outside");
  await mkdir(state, { mode: 0o700 });
  await mkdir(outside, { mode: 0o755 });
  await chmod(outside, 0o755);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function file(path: string, mode: number, text = "{}\n"): Promise<string> {
  await writeFile(path, text);
  await chmod(path, mode);
  return path;
}

async function folder(path: string, mode: number): Promise<string> {
  await mkdir(path, { recursive: true });
  await chmod(path, mode);
  return path;
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o7777;

describe("findWideModes", () => {
  it("finds files and folders open to others, not links, not the content of a skipped folder", async () => {
    const sessions = await folder(join(state, "sessions"), 0o755);
    await file(join(sessions, "a.jsonl"), 0o644);
    await file(join(sessions, "b.jsonl"), 0o600);
    const workspace = await folder(join(state, "workspace"), 0o755);
    await file(join(workspace, "notes.txt"), 0o644);
    const target = await file(join(outside, "shared.txt"), 0o644);
    await symlink(target, join(state, "link.txt"));
    const wide = await findWideModes([{ path: state, recursive: true }], [workspace]);
    expect(wide).toEqual([
      { path: sessions, kind: "folder", mode: 0o755 },
      { path: join(sessions, "a.jsonl"), kind: "file", mode: 0o644 },
      { path: workspace, kind: "folder", mode: 0o755 },
    ]);
  });

  it("skips a root that does not exist and checks each path once", async () => {
    const cfg = await file(join(state, "clawdis.json"), 0o644);
    const wide = await findWideModes([
      { path: join(root, "missing"), recursive: true },
      { path: state, recursive: true },
      { path: cfg, recursive: false },
    ]);
    expect(wide).toEqual([{ path: cfg, kind: "file", mode: 0o644 }]);
  });
});

describe("clawdis doctor: file modes", () => {
  // The model endpoint doctor asks (no gateway runs here).
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(async () => {
    await fake.close();
  });
  const doctor = async (fix: boolean, env: Record<string, string> = {}) => {
    const io = recordingIO({
      CLAWDIS_STATE_DIR: state,
      HOME: root,
      OPENAI_BASE_URL: fake.url,
      OPENAI_MODEL: "fake-model",
      ...env,
    });
    const code = await runDoctor({ fix }, io);
    return { code, out: io.out };
  };

  it("reports what other users can read, --fix makes it 0600/0700 and says which, then nothing is left", async () => {
    await chmod(state, 0o755);
    const sessions = await folder(join(state, "sessions"), 0o755);
    const transcript = await file(join(sessions, "s1.jsonl"), 0o644);
    const store = await file(join(sessions, "sessions.json"), 0o600);
    await writeFile(store, `${JSON.stringify({ main: { sessionId: "s1", updatedAt: 1 } })}\n`);
    await writeFile(
      transcript,
      `${JSON.stringify({ type: "session", version: 1, id: "s1", sessionKey: "main", createdAt: "2026-01-01T00:00:00.000Z" })}\n`,
    );
    const workspace = await folder(join(state, "workspace"), 0o755);
    const script = await file(join(workspace, "run.sh"), 0o755);
    // A session folder's workspace is the agent's too: its content is not checked.
    await folder(join(sessions, "s1"), 0o700);
    const sessionWorkspace = await folder(join(sessions, "s1", "workspace"), 0o700);
    const tool = await file(join(sessionWorkspace, "tool.sh"), 0o755);
    const config = await file(join(outside, "clawdis.json"), 0o644);
    const env = { CLAWDIS_CONFIG_PATH: config };

    const check = await doctor(false, env);
    expect(check.code).toBe(1);
    expect(check.out).toContain(`✗ folder ${state} is 0755: other local users can see what is in it`);
    expect(check.out).toContain(`✗ folder ${sessions} is 0755`);
    expect(check.out).toContain(`✗ folder ${workspace} is 0755`);
    expect(check.out).toContain(`✗ 1 file in ${sessions}/ can be read by other local users: s1.jsonl (0644)`);
    expect(check.out).toContain(
      `✗ 1 file in ${outside}/ can be read by other local users: clawdis.json (0644)`,
    );
    expect(check.out).not.toContain("run.sh");
    expect(check.out).not.toContain("tool.sh");
    expect(check.out).toContain("doctor: 5 problems found");
    expect(await modeOf(transcript)).toBe(0o644);

    const fixed = await doctor(true, env);
    expect(fixed.out).toContain(`✓ fixed: folder ${state} is now 0700 (was 0755)`);
    expect(fixed.out).toContain(
      `✓ fixed: 1 file in ${sessions}/ now readable by you only: s1.jsonl 0644 -> 0600`,
    );
    expect(fixed.out).toContain(
      `✓ fixed: 1 file in ${outside}/ now readable by you only: clawdis.json 0644 -> 0600`,
    );
    expect(fixed.out).toContain("doctor: 5 problems found, all fixed");
    expect(fixed.code).toBe(0);
    expect(await modeOf(state)).toBe(0o700);
    expect(await modeOf(sessions)).toBe(0o700);
    expect(await modeOf(workspace)).toBe(0o700);
    expect(await modeOf(transcript)).toBe(0o600);
    expect(await modeOf(config)).toBe(0o600);
    expect(await modeOf(store)).toBe(0o600);
    expect(await modeOf(script)).toBe(0o755);
    expect(await modeOf(tool)).toBe(0o755);
    expect(await modeOf(outside)).toBe(0o755);

    const again = await doctor(false, env);
    expect(again.out).toContain("✓ file modes: nothing");
    expect(again.code).toBe(0);
  });

  it("names at most ten files of a folder and counts the rest", async () => {
    const sessions = await folder(join(state, "sessions"), 0o700);
    for (let i = 0; i < 12; i++) await file(join(sessions, `f${String(i).padStart(2, "0")}.txt`), 0o640);
    const { out } = await doctor(false);
    expect(out).toContain(
      `✗ 12 files in ${sessions}/ can be read by other local users: f00.txt (0640), f01.txt (0640)`,
    );
    expect(out).toContain("f09.txt (0640), and 2 more\n");
    expect(out).not.toContain("f10.txt");
  });

  it("says nothing about modes on Windows", async () => {
    const { checkModes } = await import("./doctor-modes.js");
    await chmod(state, 0o777);
    const lines: string[] = [];
    const report = {
      ok: (t: string) => lines.push(t),
      note: (t: string) => lines.push(t),
      problem: (t: string) => lines.push(t),
      repaired: (t: string) => lines.push(t),
    };
    const sessions = { storeDir: state, workspaceDir: state, primaryKey: "main" };
    const places = { stateDir: state, configFile: join(state, "c"), sessions };
    await checkModes(places, true, report, "win32");
    expect(lines).toEqual([]);
    expect(await modeOf(state)).toBe(0o777);
    await checkModes(places, false, report, "linux");
    expect(lines).toEqual([`folder ${state} is 0777: other local users can see what is in it`]);
  });
});
