import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, ClawdisProcess, cleanupAll, contentOf, E2eState } from "./harness.js";

/**
 * `clawdis agent` through a running gateway, as a person meets it: on a terminal the reply streams and tool
 * calls are dim lines; when the gateway dies in the middle of the turn, one line says the message is safe and
 * no stack trace is printed, and the restarted gateway answers it (issue 8).
 */
describe("e2e: clawdis agent streams, and survives the gateway dying mid-turn", () => {
  afterEach(cleanupAll);

  /** `clawdis <args>` on a pseudo-terminal (util-linux `script`), so that its stdout is a TTY. */
  function onTerminal(state: E2eState, args: string[], env: Record<string, string>): ClawdisProcess {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = [process.execPath, BIN, ...args].map(quote).join(" ");
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd: state.dir,
      env: state.env(env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const proc = new ClawdisProcess(child, `clawdis ${args.join(" ")} (on a terminal)`);
    state.processes.push(proc);
    return proc;
  }

  it("on a terminal, the first words show while the model still writes, and the tool call is one dim line", async () => {
    const state = await E2eState.create();
    const gateway = await state.startGateway();
    state.fake.enqueue({ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] });
    state.fake.enqueue({ text: "First words, then the rest.", chunks: 2, hang: "after-first-output" });
    const agent = onTerminal(state, ["agent", "-m", "look around"], { NO_COLOR: "" });
    // The model holds the rest of its answer: what is on the terminal now was streamed.
    await state.fake.waitForRequest(2);
    await agent.stdout.waitFor("First words");
    expect(agent.stdout.text()).not.toContain("the rest.");
    state.fake.release();
    const exit = await agent.waitForExit();
    expect(exit.code, agent.stdout.text()).toBe(0);
    const screen = agent.stdout.text().replace(/\r/g, "");
    expect(screen).toBe('\u001b[2m⚙ bash {"command":"echo hi"}\u001b[22m\nFirst words, then the rest.\n');
    expect((await gateway.stop()).code).toBe(0);
  });

  it("NO_COLOR on a terminal: the same lines without escape codes", async () => {
    const state = await E2eState.create();
    await state.startGateway();
    state.fake.enqueue({ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] });
    state.fake.enqueue({ text: "Done." });
    const agent = onTerminal(state, ["agent", "-m", "look around"], { NO_COLOR: "1" });
    expect((await agent.waitForExit()).code).toBe(0);
    expect(agent.stdout.text().replace(/\r/g, "")).toBe('⚙ bash {"command":"echo hi"}\nDone.\n');
  });

  it("the gateway killed mid-turn: one line, no stack, exit 1; after the restart the message is answered once", async () => {
    const state = await E2eState.create();
    const first = await state.startGateway();
    state.fake.enqueue({ hang: "before-headers", text: "an answer that dies with the gateway" });
    const agent = state.spawn(["agent", "-m", "keep this safe"]);
    agent.child.stdin?.end();
    await state.fake.waitForRequest(1);
    await first.kill();
    const exit = await agent.waitForExit();
    expect(exit.code).toBe(1);
    expect(agent.stdout.text()).toBe("");
    const said = agent.stderr.text();
    expect(said).toMatch(
      /^clawdis: the gateway at http:\/\/127\.0\.0\.1:\d+ went away during the turn\. Your message is safe in its journal and will be answered \(session main\) after the gateway restarts \(`clawdis gateway`\)\n$/,
    );
    expect(said).not.toMatch(/TypeError|fetch failed|\n\s+at /);

    state.fake.enqueue({ hang: "before-headers", text: "the answer after the restart" });
    const second = await state.startGateway();
    const events = await second.events("main");
    try {
      await state.fake.waitForRequest(2);
      state.fake.release();
      await events.waitFor((e) => e.type === "message" && e.data.role === "assistant", "the replayed reply");
    } finally {
      events.close();
    }
    const sessionId = (await state.readStore()).main?.sessionId ?? "";
    const messages = await state.messages(sessionId);
    expect(messages.map((m) => [m.message.role, contentOf(m)])).toEqual([
      ["user", "keep this safe"],
      ["assistant", "the answer after the restart"],
    ]);
  });
});
