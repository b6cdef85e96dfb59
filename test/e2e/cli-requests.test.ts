import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, REPO_ROOT } from "./harness.js";

/**
 * The commands that ask the running gateway (`agent`, `status`, `sessions`, `gateway stop`) talk to it over
 * `node:http` (src/cli/local-request.ts, src/cli/agent-stream.ts), never through the built-in fetch: loading undici
 * is 20-30 ms of a command that is judged against `node -e 0`, and a fetch to a live server compiles undici's HTTP
 * parser on a background thread, ~150 ms of CPU (docs/benchmarks.md). Checked in the real binary, with a preload
 * that reports at exit whether undici was loaded.
 */
const PRELOAD = join(REPO_ROOT, "test", "fixtures", "report-undici.cjs");
const env = { NODE_OPTIONS: `--require ${PRELOAD}` };

describe("e2e: commands that ask the running gateway", () => {
  afterEach(cleanupAll);

  it("agent, status, sessions --json, chat and gateway stop get their answers without the built-in fetch", async () => {
    const state = await E2eState.create();
    const gateway = await state.startGateway();
    const agent = await state.cli(["agent", "-m", "hello"], undefined, { env });
    expect(agent.stdout).toBe("echo: hello\n");
    expect(agent.stderr).toContain("undici loaded: false");

    const status = await state.cli(["status"], undefined, { env });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/gateway: running/);
    expect(status.stderr).toContain("undici loaded: false");

    const sessions = await state.cli(["sessions", "--json"], undefined, { env });
    expect(sessions.code).toBe(0);
    const listed = JSON.parse(sessions.stdout) as { sessions: { key: string; phase?: string }[] };
    // The phase comes from the running gateway (`GET /api/sessions`): the request was made.
    expect(listed.sessions.find((s) => s.key === "main")?.phase).toBe("ready");
    expect(sessions.stderr).toContain("undici loaded: false");

    // `clawdis chat` keeps its connection for the next turn: node:http with a keep-alive agent, no built-in fetch.
    const chat = state.spawn(["chat"], { env });
    chat.write("hello from the terminal");
    await chat.stdout.waitFor("echo: hello from the terminal");
    chat.write("/quit");
    expect((await chat.waitForExit()).code).toBe(0);
    expect(chat.stderr.text()).toContain("fetch called: false");
    // `chat --attach` asks for the primary session, then for its events (a filter the gateway refuses: exit 2).
    const attach = await state.cli(["chat", "--attach", "--filter", "txt"], undefined, { env });
    expect(attach.code).toBe(2);
    expect(attach.stderr).toContain("fetch called: false");

    const stop = await state.cli(["gateway", "stop"], undefined, { env });
    expect(stop.code).toBe(0);
    expect(stop.stderr).toContain("undici loaded: false");
    expect((await gateway.waitForExit()).code).toBe(0);
  });

  it("doctor with no gateway running asks the model endpoint itself, without the built-in fetch", async () => {
    const state = await E2eState.create();
    const doctor = await state.cli(["doctor"], undefined, { env });
    expect(doctor.stdout).toMatch(/✓ model .* at http:\/\/127\.0\.0\.1:\d+\/v1, which answers/);
    expect(state.fake.modelRequests.length).toBe(1);
    expect(doctor.stderr).toContain("fetch called: false");
  });

  it("the preload sees undici when a process uses the built-in fetch (the check can fail)", async () => {
    const { stderr } = await promisify(execFile)(
      process.execPath,
      ["-e", "fetch('http://127.0.0.1:1').catch(() => {})"],
      { env: { ...process.env, ...env }, timeout: 20_000 },
    );
    expect(stderr).toContain("undici loaded: true");
    expect(stderr).toContain("fetch called: true");
  });
});
