import { mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import { createInterface } from "node:readline/promises";
import { ClawdisError } from "../core/errors.js";
import { configPath } from "../core/paths.js";
import { type CliIO, EXIT } from "./io.js";

export interface InitOptions {
  baseUrl?: string;
  model?: string;
  apiKey?: string;
}

/** Questions asked on a terminal when a flag is missing; tests pass their own. */
export type Ask = (question: string, fallback: string) => Promise<string>;

const DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1";

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
 * the config path (`CLAWDIS_CONFIG_PATH`, else `<state>/clawdis.json`), 0600 in a 0700 folder. On a terminal it
 * asks for what the flags did not give; otherwise it uses the flags and the defaults. Never overwrites an
 * existing file (exit 1, the file untouched).
 */
export async function runInit(opts: InitOptions, io: CliIO, ask?: Ask): Promise<number> {
  const path = configPath(io.env);
  const questions = ask ?? (io.isTTY && process.stdin.isTTY ? terminalAsk() : undefined);
  const options: InitOptions = { ...opts };
  if (questions) {
    options.baseUrl ??= await questions("Model endpoint (OpenAI-compatible base URL)", DEFAULT_BASE_URL);
    options.model ??= (await questions("Model name (empty: the endpoint's only model)", "")) || undefined;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new ClawdisError(
        "IO",
        `${path} already exists; clawdis init never overwrites a config. Edit it, or move it away first`,
      );
    }
    throw error;
  }
  try {
    await handle.writeFile(starterConfig(options));
    await handle.sync();
  } finally {
    await handle.close();
  }
  io.stderr(`wrote ${path}\nstart the gateway with \`clawdis gateway\` (or \`npm start\`)\n`);
  return EXIT.ok;
}

function terminalAsk(): Ask {
  return async (question, fallback) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      const answer = (await rl.question(`${question}${fallback ? ` [${fallback}]` : ""}: `)).trim();
      return answer.length > 0 ? answer : fallback;
    } finally {
      rl.close();
    }
  };
}
