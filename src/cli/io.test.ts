import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const ioUrl = pathToFileURL(join(repoRoot, "src", "cli", "io.ts")).href;

describe("processIO", () => {
  it("a stdout reader that goes away early ends nothing: no EPIPE crash, the exit code stays 0", async () => {
    // Writes 4 MB in 64 KiB lines through processIO, then says so on stderr; the reader closes after the first chunk.
    const script = `const { processIO } = await import(${JSON.stringify(ioUrl)});
const io = processIO();
for (let i = 0; i < 64; i++) io.stdout("x".repeat(65535) + "\\n");
await new Promise((resolve) => setTimeout(resolve, 0));
io.stdout("after the reader went away\\n");
io.stderr("wrote everything\\n");`;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once("data", () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(stderr).toBe("wrote everything\n");
    expect(code).toBe(0);
  });
});
