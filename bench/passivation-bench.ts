/**
 * Passivation bench (issue 11): the real `clawdis gateway` with a model (the fake model server in this process)
 * and `passivateAfterMinutes` 0.01 (0.6 s idle + the 5 s grace period): its resident memory once 10,000
 * sessions were each touched once (one turn each, through `POST /api/agent`) and unloaded, against the same
 * after 10. Memory stays flat with many idle sessions when the two are close.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI } from "../test/fakes/openai-server.js";
import type { BenchRow } from "./bench-row.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const bin = join(repoRoot, "bin", "clawdis.js");

async function rssKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchPassivation(): Promise<BenchRow[]> {
  const fake = await startFakeOpenAI();
  const stateDir = await mkdtemp(join(tmpdir(), "clawdis-bench-passivate-"));
  const env = { ...process.env, CLAWDIS_STATE_DIR: stateDir, HOME: stateDir };
  await writeFile(
    join(stateDir, "clawdis.json"),
    JSON.stringify({
      gateway: { port: 0 },
      inbound: {
        reply: {
          agent: { baseUrl: fake.url, model: "fake-model" },
          session: { passivateAfterMinutes: 0.01 },
        },
      },
    }),
  );
  const child = spawn(process.execPath, [bin, "gateway"], { env, stdio: ["ignore", "pipe", "pipe"] });
  try {
    let unloaded = 0;
    let output = "";
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        const text = chunk.toString();
        unloaded += text.split("idle session unloaded").length - 1;
        if (!output.includes("listening on")) {
          output += text;
          const match = /listening on (http:\/\/[0-9.:]+)/.exec(output);
          if (match) resolve(match[1] as string);
        }
      };
      child.stdout.on("data", onData);
      child.stderr.on("data", onData);
      child.on("exit", (code) => reject(new Error(`gateway exited ${code}: ${output}`)));
    });
    const token = (await readFile(join(stateDir, "gateway.token"), "utf8")).trim();
    let sent = 0;
    const touch = async (count: number, prefix: string) => {
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const i = next++;
          const res = await fetch(`${url}/api/agent`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            body: JSON.stringify({ message: `hello ${i}`, session: `group:${prefix}-${i}` }),
          });
          await res.text();
          if (!res.ok) throw new Error(`POST /api/agent answered ${res.status}`);
          sent++;
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
    };
    /** Until every touched session was unloaded (idle 0.6 s + grace 5 s), then a moment for the GC. */
    const settle = async () => {
      while (unloaded < sent) await sleep(200);
      (global as { gc?: () => void }).gc?.();
      await sleep(1000);
    };
    await touch(10, "small");
    await settle();
    const small = await rssKb(child.pid!);
    await touch(10_000, "many");
    await settle();
    const many = await rssKb(child.pid!);
    return [
      {
        name: "gateway RSS after 10,000 sessions touched once (unloaded)",
        ours: many / 1024,
        baselineName: "after 10 sessions",
        baseline: small / 1024,
        unit: "MB",
        note: `${unloaded} sessions unloaded; passivateAfterMinutes 0.01`,
      },
    ];
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
    await fake.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}
