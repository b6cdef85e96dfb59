import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupAll, E2eState, type GatewayProcess } from "./harness.js";

/**
 * Reminders through the real binary (docs/tools.md, Reminders): `clawdis reminders add|list|rm`, a reminder that
 * fires exactly once across a kill -9, one that came due while the gateway was down firing once at start (late),
 * and a reminders.json that does not parse set aside. Each test has its own state dir and fake model.
 */
describe("e2e: reminders", () => {
  afterEach(cleanupAll);

  /** The user texts of every model request, in order. */
  const asked = (state: E2eState): string[] =>
    state.fake.requests.map((r) => {
      const users = r.body.messages.filter((m) => m.role === "user");
      return String(users.at(-1)?.content ?? "");
    });

  /** Answers one more message from alice and waits for it: every firing accepted before it is answered too. */
  async function settle(gw: GatewayProcess, text: string): Promise<void> {
    const answer = await gw.echo({ chatId: "chat-r", senderId: "alice", text }, { wait: true });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }

  async function listJson(
    state: E2eState,
  ): Promise<{ reminders: { id: string; lastFired?: string }[]; bad: unknown[] }> {
    const list = await state.cli(["reminders", "list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    return JSON.parse(list.stdout);
  }

  it("a reminder 2 s ahead fires once, in the chat it was set from, across a kill -9 of its turn", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"] });
    const { fake } = state;
    const first = await state.startGateway();
    await settle(first, "hello");
    // Through the running gateway: it answers in the chat the session was last used from.
    const add = await state.cli(["reminders", "add", "2s", "stand", "up"]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(/^added r1 {2}next .* {2}stand up\n$/);
    fake.enqueue({ hang: "before-headers", text: "dies with the process" });
    await fake.waitForRequest(2);
    expect(asked(state)[1]).toBe("[reminder] stand up");
    expect((await first.kill()).signal).toBe("SIGKILL");
    await fake.waitForAbort(2);

    fake.enqueue({ text: "time to stand up" });
    const second = await state.startGateway();
    await settle(second, "still there?");
    const outbox = await second.outbox();
    expect(outbox.map((o) => [o.chatId, o.text])).toEqual([
      ["chat-r", "time to stand up"],
      ["chat-r", expect.stringContaining("still there?")],
    ]);
    expect(asked(state)).toEqual(["hello", "[reminder] stand up", "[reminder] stand up", "still there?"]);
    // Fired: no longer listed; a third start fires nothing.
    expect((await listJson(state)).reminders).toEqual([]);
    expect.soft(await second.stop(), second.stderr.tail()).toEqual({ code: 0, signal: null });
    const third = await state.startGateway();
    await settle(third, "and now?");
    expect(asked(state)).toHaveLength(5);
    expect(await third.outbox()).toEqual([
      expect.objectContaining({ text: expect.stringContaining("and now?") }),
    ]);
  });

  it("what came due while the gateway was down fires once at start, marked late; missed repeats once", async () => {
    const state = await E2eState.create({ allowFrom: ["alice"], config: { gateway: { timeZone: "UTC" } } });
    const now = Date.now();
    const route = { channel: "echo-transport", chatId: "chat-late", chatType: "direct" };
    // An hourly repeat at a minute half an hour ago, last fired three hours ago: two or three slots missed.
    const minute = new Date(now - 30 * 60_000).getUTCMinutes();
    await writeFile(
      join(state.dir, "reminders.json"),
      JSON.stringify({
        version: 1,
        reminders: [
          { id: "once", text: "call mum", at: new Date(now - 60_000).toISOString(), route },
          {
            id: "hourly",
            text: "drink water",
            cron: `${minute} * * * *`,
            createdAt: new Date(now - 4 * 3_600_000).toISOString(),
            lastFired: new Date(now - 3 * 3_600_000 - 30 * 60_000).toISOString(),
            route,
          },
        ],
      }),
    );
    const gw = await state.startGateway();
    await state.fake.waitForRequest(2);
    await settle(gw, "hi");
    const texts = asked(state);
    expect(texts).toHaveLength(3);
    // Oldest slot first: which one that is depends on the minute the test runs.
    expect(texts.slice(0, 2).sort()).toEqual([
      expect.stringMatching(
        /^\[reminder\] call mum\n\(late: this was due at .* UTC, while the gateway was not running\)$/,
      ),
      expect.stringMatching(
        /^\[reminder\] drink water\n\(late: .*earlier repeats missed meanwhile were skipped\)$/,
      ),
    ]);
    const outbox = await gw.outbox();
    expect(
      outbox.filter((o) => o.chatId === "chat-late"),
      JSON.stringify(outbox) + gw.stderr.text(),
    ).toHaveLength(2);
    expect(gw.stderr.text()).toMatch(/reminder once fired \(late\)/);
    const listed = await listJson(state);
    expect(listed.reminders.map((r) => r.id)).toEqual(["hourly"]);
    expect(Date.parse(listed.reminders[0]?.lastFired ?? "")).toBeGreaterThan(now - 3_600_000);

    // A restart fires neither again.
    expect.soft(await gw.stop(), gw.stderr.tail()).toEqual({ code: 0, signal: null });
    const again = await state.startGateway();
    await settle(again, "hi again");
    expect(asked(state)).toHaveLength(4);
  });

  it("clawdis reminders add/list/rm, on the file without a gateway and through one; a bad entry is listed with why", async () => {
    const state = await E2eState.create({ config: { gateway: { timeZone: "Europe/Berlin" } } });
    const add = await state.cli(["reminders", "add", "0 9 * * 1-5", "standup", "--session", "main"]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(
      /^added r1 {2}next \d{4}-\d\d-\d\d 09:00:00 GMT\+[12] {2}\(cron 0 9 \* \* 1-5\) {2}\[main\] {2}standup\n$/,
    );
    const path = join(state.dir, "reminders.json");
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const bad = await state.cli(["reminders", "add", "whenever", "x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/"whenever" is not a time/);

    // A hand edit adds an entry that cannot be used: listed as skipped, with why, and kept.
    const file = JSON.parse(await readFile(path, "utf8"));
    file.reminders.push({ id: "broken", text: "no time given" });
    await writeFile(path, JSON.stringify(file));
    const list = await state.cli(["reminders", "list"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain("r1  next");
    expect(list.stdout).toContain("skipped: entry 2 (broken): give exactly one of at or cron");

    const gw = await state.startGateway();
    expect(gw.stderr.text()).toMatch(/reminders: entry 2 \(broken\): give exactly one of at or cron/);
    const viaGateway = await state.cli(["reminders", "add", "1h", "tea", "--json"]);
    expect(viaGateway.code, viaGateway.stderr).toBe(0);
    expect(JSON.parse(viaGateway.stdout)).toMatchObject({
      id: "r2",
      text: "tea",
      schedule: expect.stringMatching(/^at /),
    });
    const listed = await state.cli(["reminders", "list", "--json"]);
    const report = JSON.parse(listed.stdout);
    expect(report).toMatchObject({
      timeZone: "Europe/Berlin",
      reminders: [{ id: "r1" }, { id: "r2" }],
      bad: [{ index: 1, id: "broken", why: "give exactly one of at or cron" }],
    });
    const rm = await state.cli(["reminders", "rm", "r1"]);
    expect(rm).toMatchObject({ code: 0, stdout: "removed r1\n" });
    const missing = await state.cli(["reminders", "rm", "r1"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no reminder "r1"/);
    // The bad entry is still in the file, untouched.
    expect(JSON.parse(await readFile(path, "utf8")).reminders.map((r: { id: string }) => r.id)).toEqual([
      "broken",
      "r2",
    ]);
    await gw.stop();
  });

  it("a reminders.json that does not parse is set aside at start, never overwritten", async () => {
    const state = await E2eState.create();
    const path = join(state.dir, "reminders.json");
    await writeFile(path, '{"version": 1, "reminders": [ {"id": "r1", ');
    const list = await state.cli(["reminders", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/does not parse: it is not JSON/);
    const gw = await state.startGateway();
    expect(gw.stderr.text()).toMatch(
      /reminders\.json does not parse: .*set aside as .*reminders\.json\.bad-/,
    );
    const aside = (await readdir(state.dir)).filter((n) => n.startsWith("reminders.json.bad-"));
    expect(aside).toHaveLength(1);
    expect(await readFile(join(state.dir, aside[0] ?? ""), "utf8")).toBe(
      '{"version": 1, "reminders": [ {"id": "r1", ',
    );
    const add = await state.cli(["reminders", "add", "1h", "fresh"]);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(await readFile(path, "utf8")).reminders).toHaveLength(1);
    await gw.stop();

    // Without a gateway, `add` sets it aside itself, and says so.
    await writeFile(path, "garbage");
    const offline = await state.cli(["reminders", "add", "2h", "later"]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stderr).toMatch(/does not parse: it is not JSON .*set aside as .*reminders\.json\.bad-/);
    expect((await readdir(state.dir)).filter((n) => n.startsWith("reminders.json.bad-"))).toHaveLength(2);
    expect(JSON.parse(await readFile(path, "utf8")).reminders).toEqual([
      expect.objectContaining({ id: "r1", text: "later" }),
    ]);
  });
});
