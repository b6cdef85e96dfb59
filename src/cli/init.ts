import { existsSync } from "node:fs";
import { mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { ClawdisError } from "../core/errors.js";
import { configPath } from "../core/paths.js";
import { type Ask, openAsk } from "./init-ask.js";
import { DEFAULT_BASE_URL, normalizeBaseUrl } from "./init-base-url.js";
import { numberedModels, pickModel } from "./init-model.js";
import { type ModelsProbe, probeModels } from "./init-probe.js";
import { type CliIO, EXIT } from "./io.js";
import { count } from "./plural.js";

export interface InitOptions {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
}

export type { Ask };

/** How `clawdis init` lists the endpoint's models; tests pass their own (a probe that never answers). */
export type ProbeModels = (baseUrl: string, apiKey: string | undefined) => Promise<ModelsProbe>;

/** How many times a terminal question is asked again after an answer that cannot be used. */
const TRIES = 3;

/**
 * The starter config `clawdis init` writes: JSON5 with a comment on every line that matters, the model and
 * endpoint filled in (or left commented out), nothing else set. Pure.
 */
export function starterConfig(options: InitOptions): string {
  const q = (value: string) => JSON.stringify(value);
  const model = options.model
    ? `        model: ${q(options.model)},`
    : '        // model: "qwen2.5:14b",   // left out: the endpoint\'s only model is used when it lists exactly one';
  const apiKey = options.apiKey
    ? `        apiKey: ${q(options.apiKey)},   // this file is private (0600); or set OPENAI_API_KEY instead`
    : '        // apiKey: "sk-…",           // or set OPENAI_API_KEY in the gateway\'s environment';
  return [
    "// clawdis configuration (JSON5: comments and trailing commas are fine).",
    "// Every key is in clawdis.example.json and docs/configuration.md; an unknown key stops the start with its path.",
    "{",
    "  inbound: {",
    "    reply: {",
    "      agent: {",
    "        // Any OpenAI-compatible endpoint: OpenAI, Ollama, llama.cpp, vLLM, LM Studio.",
    `        baseUrl: ${q(options.baseUrl ?? DEFAULT_BASE_URL)},`,
    model,
    apiKey,
    "        // The agent has a shell (bash) and file tools in the primary session. To allow only some:",
    '        // tools: { main: ["read_file"] },',
    "        // Ask in the chat before bash runs and before a file tool reaches outside the session's workspace",
    '        // (/approve, /approve always, /deny). "never": nothing asks; "always": every tool call asks (docs/tools.md).',
    '        approvals: "risky",',
    "      },",
    "    },",
    "  },",
    "  // The local web chat and API: http://127.0.0.1:18789 (loopback only; see gateway.bind).",
    "  gateway: { port: 18789 },",
    "}",
    "",
  ].join("\n");
}

/**
 * `clawdis init [--base-url <url>] [--model <name>] [--api-key <key>]`: writes a commented starter config to
 * the config path (`CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json`), 0600 in a 0700 folder. Never overwrites
 * an existing file (exit 1, the file untouched, nothing asked).
 *
 * - The endpoint: `--base-url`, else asked on a terminal, else the local Ollama default. One without a scheme is
 *   read as http:// (see normalizeBaseUrl, and said so); one that is no URL is exit 2 (asked again on a terminal).
 * - It is probed (`GET <baseUrl>/models`, 3 s) with `--api-key`, else env `OPENAI_API_KEY`. A 401/403: on a
 *   terminal the key is asked for (not echoed) and the probe repeated; when it is still refused, or piped, exit 1
 *   saying how to give a key, and nothing is written.
 * - The model: `--model` (a note when the endpoint does not list it); else on a terminal chosen from the listed
 *   models by number or name; piped, the endpoint's only model, and exit 2 when it lists several. An endpoint that
 *   cannot be listed (not running yet) is said, and the config is written all the same.
 * - Piped (stdin or stdout not a terminal), nothing is asked: it says which defaults it wrote and the flags.
 */
export async function runInit(
  opts: InitOptions,
  io: CliIO,
  ask?: Ask,
  probe: ProbeModels = probeModels,
): Promise<number> {
  const path = configPath(io.env);
  if (existsSync(path)) throw alreadyExists(path);
  const terminal = ask === undefined && io.isTTY && Boolean(process.stdin.isTTY);
  const session = terminal ? openAsk(process.stdin, process.stderr) : undefined;
  try {
    const options = await decide(opts, io, ask ?? session?.ask, probe);
    await writeNew(path, starterConfig(options));
  } finally {
    session?.close();
  }
  io.stderr(`wrote ${path}\nstart the gateway with \`clawdis gateway\` (or \`npm start\`)\n`);
  return EXIT.ok;
}

/** What goes into the file: the flags, the answers, and what the endpoint said. Throws when nothing is to be written. */
async function decide(
  opts: InitOptions,
  io: CliIO,
  questions: Ask | undefined,
  probe: ProbeModels,
): Promise<InitOptions> {
  const say = (line: string) => io.stderr(`${line}\n`);
  const defaulted: string[] = [];
  const baseUrl = await chooseBaseUrl(opts.baseUrl, questions, say, defaulted);
  const envKey = io.env.OPENAI_API_KEY?.trim() || undefined;
  let apiKey = opts.apiKey;
  let listed = await probe(baseUrl, apiKey ?? envKey);
  if (listed.kind === "unauthorized" && questions && apiKey === undefined) {
    say(`${baseUrl} answered HTTP ${listed.status}: it needs an API key.`);
    const key = await questions("API key (written to the config, which only you can read)", "", {
      secret: true,
    });
    if (key.length > 0) {
      apiKey = key;
      listed = await probe(baseUrl, apiKey);
    }
  }
  if (listed.kind === "unauthorized") {
    const refused = apiKey !== undefined || envKey !== undefined;
    throw new ClawdisError(
      "UNAUTHORIZED",
      `${baseUrl} answered HTTP ${listed.status}: it needs an API key${refused ? ", and refused the one given" : ""}. ` +
        "Give it with `clawdis init --api-key <key>` (written to the config, 0600), or set OPENAI_API_KEY " +
        "(for init and in the gateway's environment); nothing was written",
    );
  }
  if (apiKey === undefined && envKey !== undefined) {
    say(
      "using OPENAI_API_KEY from the environment (not written to the file: the gateway needs it in its environment too)",
    );
  }
  const model = await chooseModel(opts.model, baseUrl, listed, questions, say, defaulted);
  if (!questions && defaulted.length > 0) {
    say(
      `stdin is not a terminal, so nothing was asked: wrote ${defaulted.join(" and ")}; ` +
        "choose with --base-url <url>, --model <name> and --api-key <key>",
    );
  }
  return {
    baseUrl,
    ...(model !== undefined ? { model } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
  };
}

async function chooseBaseUrl(
  flag: string | undefined,
  questions: Ask | undefined,
  say: (line: string) => void,
  defaulted: string[],
): Promise<string> {
  if (flag !== undefined) {
    const checked = normalizeBaseUrl(flag);
    if (!checked.ok) throw new ClawdisError("USAGE", `--base-url: ${checked.error}`);
    if (checked.note) say(checked.note);
    return checked.url;
  }
  if (!questions) {
    defaulted.push(`the endpoint ${DEFAULT_BASE_URL} (a local Ollama)`);
    return DEFAULT_BASE_URL;
  }
  for (let tries = 1; ; tries++) {
    const checked = normalizeBaseUrl(
      await questions("Model endpoint (OpenAI-compatible base URL)", DEFAULT_BASE_URL),
    );
    if (checked.ok) {
      if (checked.note) say(checked.note);
      return checked.url;
    }
    if (tries >= TRIES)
      throw new ClawdisError("USAGE", `model endpoint: ${checked.error}; nothing was written`);
    say(`${checked.error}; try again`);
  }
}

async function chooseModel(
  flag: string | undefined,
  baseUrl: string,
  listed: Exclude<ModelsProbe, { kind: "unauthorized" }>,
  questions: Ask | undefined,
  say: (line: string) => void,
  defaulted: string[],
): Promise<string | undefined> {
  if (listed.kind === "failed") {
    say(
      `could not list the models at ${baseUrl}: ${listed.why}. The config is written all the same; start the model server before the gateway`,
    );
    if (flag !== undefined) return flag;
    if (questions) return (await questions("Model name (empty: the endpoint's only model)", "")) || undefined;
    defaulted.push("no model (the endpoint's only model is used when it lists exactly one)");
    return undefined;
  }
  const models = listed.models;
  if (flag !== undefined) {
    const pick = pickModel(flag, models);
    if (pick.ok && !pick.listed && models.length > 0) {
      say(
        `note: ${baseUrl} does not list ${JSON.stringify(flag)} (it lists ${models.join(", ")}); written as given`,
      );
    }
    return pick.ok ? pick.model : flag;
  }
  if (!questions) {
    if (models.length === 1) {
      say(`${baseUrl} lists one model: using ${models[0]}`);
      return models[0];
    }
    if (models.length > 1) {
      throw new ClawdisError(
        "USAGE",
        `${baseUrl} lists ${count(models.length, "model")} (${models.join(", ")}): choose one with --model <name>; nothing was written`,
      );
    }
    defaulted.push("no model (the endpoint lists none yet)");
    return undefined;
  }
  if (models.length === 0) {
    say(`${baseUrl} lists no models yet.`);
    return (await questions("Model name (empty: the endpoint's only model)", "")) || undefined;
  }
  say(`${baseUrl} lists ${count(models.length, "model")}:\n${numberedModels(models)}`);
  for (let tries = 1; ; tries++) {
    const pick = pickModel(await questions("Model (number or name)", "1"), models);
    if (pick.ok) {
      if (!pick.listed) say(`note: ${baseUrl} does not list ${JSON.stringify(pick.model)}; written as given`);
      return pick.model;
    }
    if (tries >= TRIES) throw new ClawdisError("USAGE", `model: ${pick.error}; nothing was written`);
    say(`${pick.error}; try again`);
  }
}

function alreadyExists(path: string): ClawdisError {
  return new ClawdisError(
    "IO",
    `${path} already exists; clawdis init never overwrites a config. Edit it, or move it away first`,
  );
}

/** Creates `path` (0600, in a 0700 folder) with `text`; an existing file is never touched. */
async function writeNew(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") throw alreadyExists(path);
    throw error;
  }
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
