import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import JSON5 from "json5";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { configSchema } from "../core/config-schema.js";
import { runInit, starterConfig } from "./init.js";
import { recordingIO } from "./io.js";

describe("clawdis init", () => {
  let state: string;
  beforeEach(async () => {
    state = await mkdtemp(join(tmpdir(), "clawdis-init-"));
  });
  afterEach(async () => {
    await rm(state, { recursive: true, force: true });
  });
  const env = () => ({ CLAWDIS_STATE_DIR: join(state, "home"), HOME: state });

  it("writes a commented starter config from the flags, private to the user, that validates", async () => {
    const io = recordingIO(env());
    expect(await runInit({ baseUrl: "http://127.0.0.1:8080/v1", model: "llama3" }, io)).toBe(0);
    const path = join(state, "home", "clawdis.json");
    const text = await readFile(path, "utf8");
    expect(text).toContain("// Any OpenAI-compatible endpoint");
    const parsed = configSchema.parse(JSON5.parse(text));
    expect(parsed.inbound.reply.agent).toMatchObject({
      baseUrl: "http://127.0.0.1:8080/v1",
      model: "llama3",
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(state, "home"))).mode & 0o777).toBe(0o700);
    expect(io.err).toContain(`wrote ${path}`);
  });

  it("asks on a terminal for what the flags did not give", async () => {
    const asked: string[] = [];
    const io = recordingIO(env(), true);
    await runInit({}, io, async (question, fallback) => {
      asked.push(question);
      return question.startsWith("Model endpoint") ? fallback : "qwen2.5:7b";
    });
    expect(asked).toHaveLength(2);
    const parsed = configSchema.parse(
      JSON5.parse(await readFile(join(state, "home", "clawdis.json"), "utf8")),
    );
    expect(parsed.inbound.reply.agent).toMatchObject({
      baseUrl: "http://127.0.0.1:11434/v1",
      model: "qwen2.5:7b",
    });
  });

  it("never overwrites an existing config", async () => {
    const path = join(state, "mine.json");
    await writeFile(path, "{ logging: { level: 'debug' } }");
    await expect(
      runInit({ model: "x" }, recordingIO({ ...env(), CLAWDIS_CONFIG_PATH: path })),
    ).rejects.toThrow(/already exists; clawdis init never overwrites/);
    expect(await readFile(path, "utf8")).toBe("{ logging: { level: 'debug' } }");
  });

  it("without a model leaves it commented out (the endpoint's only model is used)", () => {
    const parsed = configSchema.parse(JSON5.parse(starterConfig({})));
    expect(parsed.inbound.reply.agent.model).toBeUndefined();
    expect(starterConfig({})).toContain("// model:");
  });
});
