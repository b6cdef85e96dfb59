import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../plugin-api/types.js";
import { bashTool, formatSeconds } from "./bash.js";

/**
 * Still running user code. A killed process counts as gone once it is a zombie (pid 1 here may never reap it)
 * or once it has released its files on the way out (the kernel closes them before it turns into a zombie, and
 * the tool returns when the pipes are closed).
 */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return false;
    return readdirSync(`/proc/${pid}/fd`).length > 0;
  } catch {
    return false;
  }
}

describe("bash tool", () => {
  let dir: string;
  let leftovers: number[];
  const context = (overrides: Partial<ToolContext> = {}): ToolContext => ({
    signal: new AbortController().signal,
    cwd: dir,
    sessionKey: "main",
    timeoutMs: 20_000,
    ...overrides,
  });

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "clawdis-bash-")));
    leftovers = [];
  });
  afterEach(async () => {
    for (const pid of leftovers) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await rm(dir, { recursive: true, force: true });
  });

  it("returns combined stdout and stderr with the exit code, in the working directory", async () => {
    const result = await bashTool().execute({ command: "pwd; echo out; echo err >&2" }, context());
    expect(result).toEqual({ ok: true, output: `${dir}\nout\nerr\n[exit code: 0]` });
  });

  it("fails on a non-zero exit, keeping the output", async () => {
    const result = await bashTool().execute({ command: "echo nope; exit 3" }, context());
    expect(result).toEqual({ ok: false, output: "nope\n[exit code: 3]" });
  });

  it("says so when there is no output, and creates a missing working directory", async () => {
    const cwd = join(dir, "new", "workspace");
    const result = await bashTool().execute({ command: "true" }, context({ cwd }));
    expect(result).toEqual({ ok: true, output: "(no output)\n[exit code: 0]" });
    expect((await realpath(cwd)).endsWith(join("new", "workspace"))).toBe(true);
  });

  it("kills the whole process group on timeout", async () => {
    const result = await bashTool().execute(
      { command: "sleep 30 & echo $!; wait" },
      context({ timeoutMs: 200 }),
    );
    const pid = Number(result.output.split("\n")[0]);
    leftovers.push(pid);
    expect(pid).toBeGreaterThan(1);
    expect(result.ok).toBe(false);
    expect(result.output).toContain(
      "[timed out after 0.2s: the command and everything it started were killed]",
    );
    expect(isRunning(pid)).toBe(false);
  });

  it("reports progress for each chunk of output", async () => {
    const fifo = join(dir, "go.fifo");
    execFileSync("mkfifo", [fifo]);
    let calls = 0;
    let firstChunk: () => void = () => {};
    const sawFirst = new Promise<void>((resolve) => {
      firstChunk = resolve;
    });
    const running = bashTool().execute(
      { command: `echo first; read x < ${fifo}; echo second` },
      context({
        progress: () => {
          calls++;
          firstChunk();
        },
      }),
    );
    // The second chunk is written only after the test saw the first: two chunks, two progress calls.
    await sawFirst;
    expect(calls).toBe(1);
    await writeFile(fifo, "go\n");
    const result = await running;
    expect(result).toEqual({ ok: true, output: "first\nsecond\n[exit code: 0]" });
    expect(calls).toBe(2);
  });

  it("its time limit bounds silence: a command that keeps printing runs past it", async () => {
    // 8 lines 0.2 s apart (1.6 s in all) under a 1 s limit: each line starts the limit over.
    const result = await bashTool().execute(
      { command: "for i in 1 2 3 4 5 6 7 8; do echo $i; sleep 0.2; done" },
      context({ timeoutMs: 1000 }),
    );
    expect(result).toEqual({ ok: true, output: "1\n2\n3\n4\n5\n6\n7\n8\n[exit code: 0]" });
  });

  it("kills the whole process group when the signal aborts", async () => {
    const fifo = join(dir, "pid.fifo");
    execFileSync("mkfifo", [fifo]);
    const controller = new AbortController();
    const running = bashTool().execute(
      { command: `sleep 30 & echo $! > ${fifo}; wait` },
      context({ signal: controller.signal }),
    );
    // Reading the FIFO completes when the command has written the pid: no sleeping, no polling.
    const pid = Number((await readFile(fifo, "utf8")).trim());
    leftovers.push(pid);
    expect(isRunning(pid)).toBe(true);
    controller.abort();
    const result = await running;
    expect(result).toEqual({
      ok: false,
      output: "(no output)\n[aborted: the command and everything it started were killed]",
    });
    expect(isRunning(pid)).toBe(false);
  });

  it("does not wait for a background job that outlives bash", async () => {
    const result = await bashTool({ pipeGraceMs: 50 }).execute({ command: "sleep 30 & echo $!" }, context());
    const pid = Number(result.output.split("\n")[0]);
    leftovers.push(pid);
    expect(result.ok).toBe(true);
    expect(result.output).toMatch(/^\d+\n\[exit code: 0\]$/);
    expect(isRunning(pid)).toBe(true);
  });

  it("caps long output, keeping head and tail", async () => {
    const result = await bashTool({ outputLimitBytes: 1000 }).execute(
      { command: "echo START; head -c 100000 /dev/zero | tr '\\0' a; echo; echo END" },
      context(),
    );
    expect(result.ok).toBe(true);
    expect(result.output.startsWith("START\n")).toBe(true);
    expect(result.output).toMatch(/\[… \d+ bytes omitted …\]/);
    expect(result.output.endsWith("END\n[exit code: 0]")).toBe(true);
    expect(result.output.length).toBeLessThan(1200);
  });

  it("refuses a missing command and an aborted call without running anything", async () => {
    expect(await bashTool().execute({}, context())).toEqual({
      ok: false,
      output: 'bash: missing argument "command" (a string)',
    });
    const controller = new AbortController();
    controller.abort();
    const result = await bashTool().execute(
      { command: `touch ${join(dir, "ran")}` },
      context({ signal: controller.signal }),
    );
    expect(result.ok).toBe(false);
    await expect(readFile(join(dir, "ran"))).rejects.toThrow();
  });

  it("formats seconds", () => {
    expect(formatSeconds(200)).toBe("0.2s");
    expect(formatSeconds(90_000)).toBe("90s");
  });
});
