import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitWithDeadline } from "../helpers/wait-deadline.js";
import { cleanupAll } from "./harness.js";
import { ALICE, privateChat, telegramE2e } from "./telegram-harness.js";

/**
 * The session folder and its log (issue 32), through the real `clawdis gateway`, real grammY and the fake Bot API:
 * a turn with tool calls writes its lines to `<store dir>/<sessionId>/logs/session.log` (a turn, model calls, tool
 * calls with their arguments redacted); the bot token from the config, the gateway token and a `*_TOKEN` variable
 * of the gateway's environment, all used in a tool's arguments, never appear in it; the folders are 0700 and made
 * only when needed; `clawdis sessions show main` (and `--json`) prints the folder, the transcript and the log tail.
 */
describe("e2e: the session folder and its log", () => {
  afterEach(cleanupAll);

  const ENV_SECRET = "env-planted-s3cret-value";
  const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

  /** Waits (polling the file, with a deadline) until the log holds a line of `kind`; its text. */
  const logWith = (path: string, kind: string): Promise<string> =>
    waitWithDeadline(`a "${kind}" line in ${path}`, undefined, (resolve) => {
      const timer = setInterval(() => {
        void readFile(path, "utf8").then(
          (text) => {
            if (text.split("\n").some((line) => line.split(" ")[1] === kind)) resolve(text);
          },
          () => {},
        );
      }, 50);
      return () => clearInterval(timer);
    });

  it("a turn with tool calls is logged, redacted, and shown by `clawdis sessions show`", async () => {
    const { state, tg } = await telegramE2e();
    const gw = await state.startGateway({ env: { MY_SERVICE_TOKEN: ENV_SECRET } });
    await tg.waitFor(() => tg.polling, "the first long poll");
    // Nothing of a session folder before a session has anything to keep.
    const storeDir = join(state.dir, "sessions");
    const folders = async () =>
      (await readdir(storeDir, { withFileTypes: true }).catch(() => [])).filter((d) => d.isDirectory());
    expect(await folders()).toEqual([]);

    const longContent = `${"a line of notes\n".repeat(20)}${tg.token}\n`;
    state.fake.enqueue(
      {
        toolCalls: [
          { name: "bash", arguments: { command: `echo ${tg.token} ${ENV_SECRET} ${gw.token} > /dev/null` } },
          { name: "write_file", arguments: { path: "notes.txt", content: longContent } },
        ],
      },
      { text: "done" },
    );
    tg.pushMessage({ chat: privateChat(ALICE), from: ALICE, text: "run it" });
    await tg.waitFor(() => tg.textsTo(ALICE.id).includes("done"), "the reply");

    const { sessionId } = (await state.readStore()).main!;
    const folder = join(storeDir, sessionId);
    const logPath = join(folder, "logs", "session.log");
    const log = await logWith(logPath, "turn");
    const lines = log.trim().split("\n");
    const kinds = lines.map((line) => line.split(" ")[1]);
    expect(kinds.filter((k) => k === "model")).toHaveLength(2);
    expect(kinds.filter((k) => k === "tool")).toHaveLength(2);
    expect(kinds.at(-1)).toBe("turn");
    const turn = lines.at(-1)!;
    expect(turn).toMatch(/ channel=telegram /);
    expect(turn).toContain(` sender=${ALICE.id} `);
    expect(turn).toMatch(/ durationMs=\d+ /);
    expect(turn).toMatch(/ tokensIn=\d+ tokensOut=\d+ /);
    expect(turn).toContain(" stop=end");
    const bash = lines.find((line) => line.includes(" tool ") && line.includes("name=bash"))!;
    expect(bash).toContain("ok=true");
    expect(bash).toContain("«secret»");
    const write = lines.find((line) => line.includes("name=write_file"))!;
    expect(write).toMatch(/content: <\d+ chars #[0-9a-f]{8}>/);
    // No secret, in any line: the config's bot token, the gateway token, the environment's *_TOKEN.
    for (const secret of [tg.token, gw.token, ENV_SECRET]) expect(log).not.toContain(secret);
    expect(log).not.toContain("a line of notes");

    // Private, and only what was needed: the log's folders, not the staging or artifacts ones.
    expect(await modeOf(folder)).toBe(0o700);
    expect(await modeOf(join(folder, "logs"))).toBe(0o700);
    expect(await modeOf(logPath)).toBe(0o600);
    expect((await readdir(folder)).sort()).toEqual(["logs"]);
    // The primary session works in the agent's workspace; the transcript stays flat beside the folder.
    expect(await readFile(join(state.dir, "workspace", "notes.txt"), "utf8")).toBe(longContent);
    expect((await stat(state.transcriptPath(sessionId))).isFile()).toBe(true);

    const shown = await state.cli(["sessions", "show", "main"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`id          ${sessionId}`);
    expect(shown.stdout).toContain(`folder      ${folder}`);
    expect(shown.stdout).toContain(`transcript  ${state.transcriptPath(sessionId)}`);
    expect(shown.stdout).toContain(`telegram:${ALICE.id}: run it`);
    expect(shown.stdout).toContain("tools: bash, write_file");
    expect(shown.stdout).toContain(turn);

    const json = await state.cli(["sessions", "show", "main", "--json"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      key: "main",
      sessionId,
      folder,
      transcript: state.transcriptPath(sessionId),
      log: logPath,
      phase: expect.any(String),
      turns: [
        {
          channel: "telegram",
          sender: String(ALICE.id),
          text: "run it",
          reply: "done",
          tools: ["bash", "write_file"],
        },
      ],
    });
    expect(report.logTail).toContain(turn);

    const missing = await state.cli(["sessions", "show", "group:nobody"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no session "group:nobody"');
  });
});
