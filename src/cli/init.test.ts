import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import JSON5 from "json5";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeOpenAI, startFakeOpenAI } from "../../test/fakes/openai-server.js";
import { configSchema } from "../core/config-schema.js";
import { isClawdisError } from "../core/errors.js";
import { type ProbeModels, runInit, starterConfig } from "./init.js";
import { type Ask, openAsk } from "./init-ask.js";
import type { ModelsProbe } from "./init-probe.js";
import { recordingIO } from "./io.js";

/** A probe for tests that must not reach the network: the endpoint is not running. */
const notRunning: ProbeModels = async () => ({ kind: "failed", why: "not reachable (connect ECONNREFUSED)" });

/** Answers questions in order, recording each; a question past the script fails the test. */
function scripted(answers: string[]): Ask & { asked: string[] } {
  const asked: string[] = [];
  const ask = async (question: string, fallback: string) => {
    asked.push(question);
    if (answers.length === 0) throw new Error(`unexpected question: ${question}`);
    const answer = answers.shift()!;
    return answer.length > 0 ? answer : fallback;
  };
  return Object.assign(ask, { asked });
}

describe("clawdis init", () => {
  let state: string;
  let fake: FakeOpenAI;
  beforeEach(async () => {
    state = await mkdtemp(join(tmpdir(), "clawdis-init-"));
    fake = await startFakeOpenAI();
  });
  afterEach(async () => {
    await fake.close();
    await rm(state, { recursive: true, force: true });
  });
  const env = (extra: Record<string, string> = {}) => ({
    CLAWDIS_STATE_DIR: join(state, "home"),
    HOME: state,
    ...extra,
  });
  const path = () => join(state, "home", "clawdis.json");
  const written = async () => configSchema.parse(JSON5.parse(await readFile(path(), "utf8")));
  const exists = () =>
    stat(path()).then(
      () => true,
      () => false,
    );

  it("writes a commented starter config from the flags, private to the user, that validates", async () => {
    const io = recordingIO(env());
    expect(await runInit({ baseUrl: fake.url, model: "fake-model" }, io)).toBe(0);
    const text = await readFile(path(), "utf8");
    expect(text).toContain("// Any OpenAI-compatible endpoint");
    expect((await written()).inbound.reply.agent).toMatchObject({ baseUrl: fake.url, model: "fake-model" });
    expect((await stat(path())).mode & 0o777).toBe(0o600);
    expect((await stat(join(state, "home"))).mode & 0o777).toBe(0o700);
    expect(io.err).toContain(`wrote ${path()}`);
    expect(io.err).not.toContain("stdin is not a terminal");
  });

  it("on a terminal offers the endpoint's models and takes one by number", async () => {
    fake.models.splice(0, fake.models.length, "llama3", "qwen2.5:7b");
    const ask = scripted([fake.url, "2"]);
    const io = recordingIO(env(), true);
    expect(await runInit({}, io, ask)).toBe(0);
    expect(ask.asked).toEqual(["Model endpoint (OpenAI-compatible base URL)", "Model (number or name)"]);
    expect(io.err).toContain(`${fake.url} lists 2 models:\n  1) llama3\n  2) qwen2.5:7b\n`);
    expect((await written()).inbound.reply.agent).toMatchObject({ baseUrl: fake.url, model: "qwen2.5:7b" });
    expect(fake.modelRequests).toHaveLength(1);
  });

  it("on a terminal takes a model by name, and asks again after a number that is not in the list", async () => {
    fake.models.splice(0, fake.models.length, "llama3", "qwen2.5:7b");
    const ask = scripted(["9", "llama3"]);
    const io = recordingIO(env(), true);
    await runInit({ baseUrl: fake.url }, io, ask);
    expect(ask.asked).toEqual(["Model (number or name)", "Model (number or name)"]);
    expect(io.err).toContain("there is no model 9: choose 1 to 2, or type a name; try again");
    expect((await written()).inbound.reply.agent.model).toBe("llama3");
  });

  it("normalises an endpoint without a scheme and says so; asks again after one that is no URL", async () => {
    const bare = fake.url.replace(/^http:\/\//, "").replace(/\/v1$/, "");
    const ask = scripted(["ftp://nope", bare, ""]);
    const io = recordingIO(env(), true);
    await runInit({}, io, ask);
    expect(io.err).toContain(
      'expected an http:// or https:// URL like "http://127.0.0.1:11434/v1", got "ftp://nope"; try again',
    );
    expect(io.err).toContain(`"${bare}" has no scheme: using ${fake.url}`);
    expect((await written()).inbound.reply.agent).toMatchObject({ baseUrl: fake.url, model: "fake-model" });
  });

  it("--base-url without a scheme is normalised; one that is no URL is exit 2 and writes nothing", async () => {
    const bare = fake.url.replace(/^http:\/\//, "");
    const io = recordingIO(env());
    await runInit({ baseUrl: bare }, io);
    expect(io.err).toContain(`"${bare}" has no scheme: using ${fake.url}`);
    expect((await written()).inbound.reply.agent.baseUrl).toBe(fake.url);
    await rm(path());
    const error = await runInit({ baseUrl: "not a url" }, recordingIO(env())).catch((e: unknown) => e);
    expect(isClawdisError(error) && error.exitCode).toBe(2);
    expect(String(error)).toContain(
      '--base-url: expected an http:// or https:// URL like "http://127.0.0.1:11434/v1", got "not a url"',
    );
    expect(await exists()).toBe(false);
  });

  it("on a terminal asks for the API key when the endpoint answers 401, and lists the models with it", async () => {
    fake.apiKey = "sk-secret";
    fake.models.splice(0, fake.models.length, "gpt-x");
    const ask = scripted(["sk-secret", ""]);
    const io = recordingIO(env(), true);
    await runInit({ baseUrl: fake.url }, io, ask);
    expect(io.err).toContain(`${fake.url} answered HTTP 401: it needs an API key.`);
    expect(ask.asked).toEqual([
      "API key (written to the config, which only you can read)",
      "Model (number or name)",
    ]);
    // gpt-x came from the list the endpoint gave only with the key.
    expect((await written()).inbound.reply.agent).toMatchObject({ apiKey: "sk-secret", model: "gpt-x" });
  });

  it("piped, a 401 is exit 1 saying how to give a key, and nothing is written", async () => {
    fake.apiKey = "sk-secret";
    const error = await runInit({ baseUrl: fake.url }, recordingIO(env())).catch((e: unknown) => e);
    expect(isClawdisError(error, "UNAUTHORIZED") && error.exitCode).toBe(1);
    expect(String(error)).toContain("it needs an API key. Give it with `clawdis init --api-key <key>`");
    expect(String(error)).toContain("or set OPENAI_API_KEY");
    expect(await exists()).toBe(false);
    // With the key in the environment it lists the models, and the key stays out of the file.
    const io = recordingIO(env({ OPENAI_API_KEY: "sk-secret" }));
    await runInit({ baseUrl: fake.url }, io);
    expect(io.err).toContain("using OPENAI_API_KEY from the environment");
    expect((await written()).inbound.reply.agent).toMatchObject({ model: "fake-model" });
    expect((await written()).inbound.reply.agent.apiKey).toBeUndefined();
  });

  it("piped, takes the endpoint's only model; several without --model is exit 2, writing nothing", async () => {
    const one = recordingIO(env());
    await runInit({ baseUrl: fake.url }, one);
    expect(one.err).toContain(`${fake.url} lists one model: using fake-model`);
    expect((await written()).inbound.reply.agent.model).toBe("fake-model");
    await rm(path());
    fake.models.push("other-model");
    const error = await runInit({ baseUrl: fake.url }, recordingIO(env())).catch((e: unknown) => e);
    expect(isClawdisError(error) && error.exitCode).toBe(2);
    expect(String(error)).toContain(
      "lists 2 models (fake-model, other-model): choose one with --model <name>",
    );
    expect(await exists()).toBe(false);
    const io = recordingIO(env());
    await runInit({ baseUrl: fake.url, model: "missing-model" }, io);
    expect(io.err).toContain(
      'does not list "missing-model" (it lists fake-model, other-model); written as given',
    );
  });

  it("piped without flags says it wrote the defaults because stdin is not a terminal", async () => {
    const io = recordingIO(env());
    await runInit({}, io, undefined, notRunning);
    expect(io.err).toContain(
      "stdin is not a terminal, so nothing was asked: wrote the endpoint http://127.0.0.1:11434/v1 (a local Ollama) and no model",
    );
    expect(io.err).toContain("could not list the models at http://127.0.0.1:11434/v1: not reachable");
    expect((await written()).inbound.reply.agent.baseUrl).toBe("http://127.0.0.1:11434/v1");
  });

  it("never overwrites an existing config, and asks nothing first", async () => {
    const mine = join(state, "mine.json");
    await writeFile(mine, "{ logging: { level: 'debug' } }");
    const ask = scripted([]);
    await expect(
      runInit({ model: "x" }, recordingIO(env({ CLAWDIS_CONFIG_PATH: mine }), true), ask),
    ).rejects.toThrow(/already exists; clawdis init never overwrites/);
    expect(ask.asked).toEqual([]);
    expect(await readFile(mine, "utf8")).toBe("{ logging: { level: 'debug' } }");
  });

  it("without a model leaves it commented out (the endpoint's only model is used)", () => {
    const parsed = configSchema.parse(JSON5.parse(starterConfig({})));
    expect(parsed.inbound.reply.agent.model).toBeUndefined();
    expect(starterConfig({})).toContain("// model:");
  });
});

describe("probeModels through runInit", () => {
  it("an endpoint whose model list hangs is given up on, and the config still written", async () => {
    const fake = await startFakeOpenAI();
    const state = await mkdtemp(join(tmpdir(), "clawdis-init-"));
    try {
      fake.hangModels = true;
      const { probeModels } = await import("./init-probe.js");
      const quick: ProbeModels = (url, key): Promise<ModelsProbe> => probeModels(url, key, 50);
      const io = recordingIO({ CLAWDIS_STATE_DIR: state, HOME: state });
      expect(await runInit({ baseUrl: fake.url, model: "m" }, io, undefined, quick)).toBe(0);
      expect(io.err).toContain(`could not list the models at ${fake.url}: no answer within 0.05 s`);
    } finally {
      fake.releaseModels();
      await fake.close();
      await rm(state, { recursive: true, force: true });
    }
  });
});

describe("openAsk", () => {
  it("reads one line per question, keeps lines typed ahead, and says when the input ended", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = "";
    output.on("data", (chunk: Buffer) => {
      shown += chunk.toString();
    });
    const { ask, close } = openAsk(input, output);
    input.write("first\n\nthird\n");
    expect(await ask("One", "d1")).toBe("first");
    expect(await ask("Two", "d2")).toBe("d2");
    expect(await ask("Three", "")).toBe("third");
    input.end();
    await expect(ask("Four", "")).rejects.toThrow('the input ended before "Four" was answered');
    close();
    expect(shown).toContain("One [d1]: Two [d2]: Three: ");
  });

  it("on a terminal does not echo a secret answer, and does echo the others", async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    let shown = "";
    output.on("data", (chunk: Buffer) => {
      shown += chunk.toString();
    });
    const { ask, close } = openAsk(input, output);
    const name = ask("Name", "");
    input.write("visible\r");
    expect(await name).toBe("visible");
    const key = ask("Key", "", { secret: true });
    input.write("sk-hidden\r");
    expect(await key).toBe("sk-hidden");
    close();
    expect(shown).toContain("visible");
    expect(shown).toContain("Key: ");
    expect(shown).not.toContain("sk-hidden");
  });
});
