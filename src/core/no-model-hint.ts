/**
 * What every surface says when no model is configured (the start log, `clawdis status`, `clawdis doctor`, the
 * first reply (`noModelReply`), the empty web chat page): the file to edit and a three-line example. One wording, one place.
 */
export const NO_MODEL_EXAMPLE = [
  "{",
  '  inbound: { reply: { agent: { baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5:14b" } } },',
  "}",
] as const;

/** The hint as lines: what is missing, where to put it, the example, the environment alternative. */
export function noModelHint(configPath: string): string[] {
  return [
    "No model is configured: the agent cannot answer yet.",
    `Put this in ${configPath} (or run \`clawdis init\`); a running gateway takes it when the file is saved:`,
    ...NO_MODEL_EXAMPLE.map((line) => `  ${line}`),
    "Or set OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL in the gateway's environment and restart it.",
  ];
}

/**
 * The notice a message gets when no model is configured (its turn cannot run): the key to set and the config file
 * to set it in, by its full path (`configPath`: the file the gateway reads, `.json5` when that is the one).
 */
export function noModelReply(configPath: string): string {
  return `No model is configured: set inbound.reply.agent.model (and baseUrl/apiKey, or OPENAI_BASE_URL/OPENAI_API_KEY) in ${configPath} (a running gateway takes it when the file is saved; environment variables need a restart).`;
}
