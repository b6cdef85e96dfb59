import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watch } from "chokidar";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Clock } from "../core/clock.js";
import { silentLogger } from "../core/logger.js";
import { type ConfigFileEvent, ConfigWatcher } from "./config-watcher.js";

/** What the watcher reported, with the file's content when it did (what a listener would read). */
interface Seen {
  event: ConfigFileEvent;
  content: string | null;
}

describe("ConfigWatcher: every way an editor saves counts, nothing else does", () => {
  let dir: string;
  let file: string;
  let watcher: ConfigWatcher;
  let seen: Seen[];
  let wake: () => void;
  /** The recheck timers the watcher set, to fire by hand. */
  let timers: { fn: () => void; cleared: boolean }[];
  let timerSet: () => void;
  const clock: Clock = {
    now: () => 0,
    setTimeout: (fn) => {
      const timer = { fn, cleared: false };
      timers.push(timer);
      timerSet();
      return timer;
    },
    clearTimeout: (handle) => {
      (handle as { cleared: boolean }).cleared = true;
    },
  };
  /** Resolves once the watcher has set a recheck timer (the file disappeared), with that timer. */
  const recheckSet = (): Promise<{ fn: () => void; cleared: boolean }> =>
    new Promise((resolve) => {
      const check = () => {
        const timer = timers.find((t) => !t.cleared);
        if (timer) resolve(timer);
        else timerSet = check;
      };
      check();
    });

  /** Resolves once an event satisfies `match` (each test's own deadline turns a miss into a failure). */
  const next = (match: (s: Seen) => boolean): Promise<Seen> =>
    new Promise((resolve) => {
      const check = () => {
        const hit = seen.find(match);
        if (hit) resolve(hit);
        else wake = check;
      };
      check();
    });

  /** Fires the next poll timer the watcher set (waiting until it sets one), as `recheckMs` passing would. */
  const firePoll = async (): Promise<void> => {
    const timer = await recheckSet();
    timer.cleared = true;
    timer.fn();
    // The poll's look and its chokidar start run after the timer: until it set the next timer or reported.
    await new Promise((resolve) => setImmediate(resolve));
  };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "clawdis-watch-"));
    file = join(dir, "clawdis.json");
    await writeFile(file, "{ logging: { level: 'info' } }\n");
    seen = [];
    wake = () => {};
    timers = [];
    timerSet = () => {};
    watcher = new ConfigWatcher({
      path: file,
      logger: silentLogger,
      clock,
      onEvent: (event) => {
        seen.push({ event, content: existsSync(file) ? readFileSync(file, "utf8") : null });
        wake();
      },
    });
    await watcher.start();
  });

  afterEach(async () => {
    await watcher.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("an in-place save is one change with the final content; other files in the folder and the start say nothing", async () => {
    // A control watcher on the lock file: once it has seen the other files' writes, so would a watcher that
    // reported them.
    let controlSaw!: () => void;
    const othersSeen = new Promise<void>((resolve) => {
      controlSaw = resolve;
    });
    const control = new ConfigWatcher({
      path: join(dir, "state.lock"),
      logger: silentLogger,
      onEvent: () => controlSaw(),
    });
    await control.start();
    await writeFile(join(dir, "gateway.json"), "{}");
    await writeFile(join(dir, "state.lock"), "other");
    await othersSeen;
    await control.close();
    await writeFile(file, "{ logging: { level: 'debug' } }\n");
    await next((s) => s.content?.includes("debug") === true);
    expect(seen).toEqual([{ event: "changed", content: "{ logging: { level: 'debug' } }\n" }]);
  });

  it("a save-by-rename (written next to it, renamed over it, as VS Code does) is a change, never a removal", async () => {
    const temp = join(dir, ".clawdis.json.tmp-123");
    await writeFile(temp, "{ logging: { level: 'warn' } }\n");
    await rename(temp, file);
    await next((s) => s.content?.includes("warn") === true);
    expect(seen.map((s) => s.event)).toEqual(["changed"]);
  });

  it("vim's backup save (the file moved aside, then written anew) is a change, never a removal", async () => {
    await rename(file, `${file}~`);
    await writeFile(file, "{ logging: { level: 'error' } }\n");
    await next((s) => s.content?.includes("error") === true);
    expect(seen.map((s) => s.event)).not.toContain("removed");
  });

  it("a delete is a removal once the file is still gone at the recheck; created again, it is a change", async () => {
    await unlink(file);
    (await recheckSet()).fn();
    await next((s) => s.event === "removed");
    await writeFile(file, "{ gateway: { port: 1 } }\n");
    const back = await next((s) => s.event === "changed");
    expect(back.content).toBe("{ gateway: { port: 1 } }\n");
    expect(seen.map((s) => s.event)).toEqual(["removed", "changed"]);
  });

  it("a file back by the recheck (a slow save-by-rename) is a change, never a removal", async () => {
    await unlink(file);
    const recheck = await recheckSet();
    await writeFile(file, "{ gateway: { port: 2 } }\n");
    recheck.fn();
    await next((s) => s.event === "changed");
    expect(seen).toEqual([{ event: "changed", content: "{ gateway: { port: 2 } }\n" }]);
  });

  it("a file that did not exist when watching began is a change once created", async () => {
    const later = join(dir, "later.json5");
    const events: ConfigFileEvent[] = [];
    let created!: () => void;
    const got = new Promise<void>((resolve) => {
      created = resolve;
    });
    const other = new ConfigWatcher({
      path: later,
      logger: silentLogger,
      onEvent: (event) => {
        events.push(event);
        created();
      },
    });
    await other.start();
    await writeFile(later, "{}\n");
    await got;
    await other.close();
    expect(events).toEqual(["changed"]);
  });

  it("two quick saves: the last event carries the second save, and no event saw a half-written file", async () => {
    await writeFile(file, "{ logging: { level: 'debug' } }\n");
    await writeFile(file, "{ logging: { level: 'warn' } }\n");
    await next((s) => s.content?.includes("warn") === true);
    expect(seen.at(-1)?.content).toBe("{ logging: { level: 'warn' } }\n");
    for (const s of seen) expect(s.content).toMatch(/^\{ logging: \{ level: '(debug|warn)' \} \}\n$/);
  });

  it("after a read error it recovers even when chokidar lost track: the next save, and the ones after, are seen", async () => {
    await watcher.close();
    // The first chokidar watches an empty folder: like one that lost track of the path (seen when the path turned
    // into a folder while chokidar scanned), it reports nothing. Those started anew watch the real folder.
    const empty = await mkdtemp(join(tmpdir(), "clawdis-watch-empty-"));
    let started = 0;
    const recovering = new ConfigWatcher({
      path: file,
      logger: silentLogger,
      clock,
      watchFolder: (folder, options) => watch(started++ === 0 ? empty : folder, options),
      onEvent: (event) => {
        seen.push({ event, content: existsSync(file) ? readFileSync(file, "utf8") : null });
        wake();
      },
    });
    try {
      await recovering.start();
      await unlink(file);
      await mkdir(file);
      // What the reloader does when its read fails (EISDIR).
      recovering.recover();
      // Still a folder at the first look: nothing is reported, and it looks again.
      await firePoll();
      expect(seen).toEqual([]);
      await rm(file, { recursive: true });
      await writeFile(file, "{ logging: { level: 'debug' } }\n");
      await firePoll();
      await next((s) => s.content?.includes("debug") === true);
      expect(started).toBe(2);
      // The new chokidar reports the next save by itself.
      await writeFile(file, "{ logging: { level: 'warn' } }\n");
      await next((s) => s.content?.includes("warn") === true);
      expect(seen.map((s) => s.event)).toEqual(["changed", "changed"]);
    } finally {
      await recovering.close();
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("reports nothing after close", async () => {
    await watcher.close();
    await writeFile(file, "{ logging: { level: 'debug' } }\n");
    // A second watcher on the same file sees the save; the closed one must not have.
    const seenByOther: ConfigFileEvent[] = [];
    let done!: () => void;
    const got = new Promise<void>((resolve) => {
      done = resolve;
    });
    const other = new ConfigWatcher({
      path: file,
      logger: silentLogger,
      onEvent: (event) => {
        seenByOther.push(event);
        done();
      },
    });
    await other.start();
    await writeFile(file, "{ logging: { level: 'warn' } }\n");
    await got;
    await other.close();
    expect(seenByOther).toEqual(["changed"]);
    expect(seen).toEqual([]);
  });
});
