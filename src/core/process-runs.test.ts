import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { processRuns } from "./process-runs.js";

describe("processRuns", () => {
  it("is true for a process that runs, false once it exited and for pids that are no process", async () => {
    expect(processRuns(process.pid)).toBe(true);
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    expect(processRuns(child.pid as number)).toBe(false);
    for (const pid of [0, -1, 1.5, Number.NaN]) expect(processRuns(pid)).toBe(false);
  });

  it("is false for a zombie: a process that exited and that its parent has not reaped", async () => {
    // sh starts a child that waits for a line on stdin, prints its pid and becomes `sleep`, which never reaps it.
    const parent = spawn("sh", ["-c", "exec 3<&0; (read line <&3) & echo $!; exec sleep 30"], {
      stdio: ["pipe", "pipe", "ignore"],
    });
    const until = async (what: () => boolean) => {
      for (let i = 0; i < 500 && !what(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(what()).toBe(true);
    };
    try {
      const pid = Number(
        await new Promise<string>((resolve) => parent.stdout.once("data", (d) => resolve(String(d)))),
      );
      expect(processRuns(pid)).toBe(true);
      // Once sh is sleep, the child's exit leaves it a zombie for as long as sleep lives.
      await until(() => readFileSync(`/proc/${parent.pid}/comm`, "utf8").trim() === "sleep");
      parent.stdin.write("go\n");
      await until(() => !processRuns(pid));
      // It is still there for signal 0: the zombie check is what tells.
      expect(() => process.kill(pid, 0)).not.toThrow();
    } finally {
      parent.kill("SIGKILL");
    }
  });
});
