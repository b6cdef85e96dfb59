import { z } from "zod";
import { isTimeZone } from "./time-zone.js";

/**
 * The core's part of the schema of `clawdis.json`: every key the core itself reads. Strict everywhere: an unknown
 * key is an error, never ignored. The sections plugins own (`telegram`, `webhooks`, …) are added to it at load
 * (config-sections.ts), so a transport's keys live with the transport. Defaults live here and in each section's
 * own schema; `ClawdisConfig` is the fully defaulted core. Every key is documented in docs/configuration.md and
 * shown in clawdis.example.json.
 */

/** An absolute http:// or https:// URL ("localhost:11434" without a scheme is refused, not misread). */
const httpUrl = (example: string) =>
  z.url({ protocol: /^https?$/, error: `an http:// or https:// URL like "${example}"` });

const positiveSeconds = (fallback: number) => z.number().positive().default(fallback);

export const timeoutsSchema = z.strictObject({
  prefillSeconds: positiveSeconds(1800),
  firstTokenSeconds: positiveSeconds(600),
  noProgressSeconds: positiveSeconds(1200),
  toolExecutionSeconds: positiveSeconds(90),
  sidecarLlmSeconds: positiveSeconds(90),
  turnLlmSeconds: positiveSeconds(180),
});

export const compactionSchema = z.strictObject({
  threshold: z.number().gt(0).max(1).default(0.75),
  keepRecentToolResults: z.number().int().min(0).default(3),
  keepRecentMessages: z.number().int().min(1).default(6),
});

/** Session upkeep (docs/sessions.md): absent, the gateway does none; `clawdis sessions cleanup` takes these defaults. */
export const maintenanceSchema = z.strictObject({
  /** `warn`: only report (log at start and daily, `clawdis doctor`); `enforce`: prune at start and daily. */
  mode: z.enum(["warn", "enforce"]).default("warn"),
  pruneAfterDays: z.number().positive().default(30),
  maxEntries: z.number().int().min(1).default(500),
  maxDiskMb: z.number().positive().optional(),
});

export const sessionSchema = z.strictObject({
  scope: z.enum(["per-sender", "global"]).default("per-sender"),
  idleMinutes: z.number().min(1).default(60),
  resetTriggers: z.array(z.string().trim().min(1)).default(["/new"]),
  /** "HH:MM" in the gateway's time zone: the first message after it passed since the last one starts afresh. */
  dailyResetAt: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day "HH:MM" (24-hour) like "04:00"')
    .optional(),
  /** Absent: `<state>/sessions/sessions.json`. `~` is expanded. */
  store: z.string().min(1).optional(),
  mainKey: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, "a key of 1 to 64 letters, digits, '.', '_', ':' or '-'")
    .default("main"),
  timeouts: timeoutsSchema.default(() => timeoutsSchema.parse({})),
  passivateAfterMinutes: z.number().min(0).default(60),
  compaction: compactionSchema.default(() => compactionSchema.parse({})),
  maintenance: maintenanceSchema.optional(),
  /** After a session's first exchange, one sidecar call names it (`title` on its entry). */
  titles: z.boolean().default(true),
});

export const toolsSchema = z.strictObject({
  /** Tools the owner is offered in the primary (or global) session; `"*"` means every tool. */
  main: z.array(z.string().min(1)).default(["*"]),
  /** Tools offered in group sessions, to whoever writes there (confined to the group's folder); none unless listed. */
  groups: z.array(z.string().min(1)).default([]),
  /**
   * Tools for people who are not the owner, in the primary session: `"<channel>:<sender id>"` (e.g.
   * `"telegram:222"`) → names; confined to the workspace. Default none: other people talk without tools.
   */
  people: z
    .record(
      z.string().regex(/^[a-z0-9-]+:.+$/, 'a "<channel>:<sender id>" key like "telegram:222"'),
      z.array(z.string().min(1)),
    )
    .default({}),
});

/** What one tool call does under the approvals policy: runs, waits for the person's answer, or is refused. */
export const approvalActionSchema = z.enum(["run", "ask", "deny"]);

/**
 * `inbound.reply.agent.approvals` (docs/tools.md): `"never"` (nothing asks), `"risky"` (bash, and file tools
 * outside the session's workspace, ask), `"always"` (every call asks), or a map tool name → run/ask/deny (`"*"`:
 * every tool not named; a tool neither named nor covered by `"*"` runs). Absent: nothing asks, as `"never"`.
 */
export const approvalsSchema = z.union([
  z.enum(["never", "risky", "always"]),
  z.record(z.string().min(1), approvalActionSchema),
]);

export const agentSchema = z.strictObject({
  /** OpenAI-compatible endpoint; else env OPENAI_BASE_URL; else https://api.openai.com/v1. */
  baseUrl: httpUrl("http://127.0.0.1:11434/v1").optional(),
  /** Else env OPENAI_API_KEY. */
  apiKey: z.string().min(1).optional(),
  /** Without a model the gateway starts and every reply says how to configure one. */
  model: z.string().min(1).optional(),
  contextTokens: z.number().int().positive().default(128_000),
  maxOutputTokens: z.number().int().positive().default(4096),
  compactionModel: z.string().min(1).optional(),
  fallbackModel: z.string().min(1).optional(),
  systemPrompt: z.string().optional(),
  /** Working directory of the tools; absent: `<state>/workspace`. `~` is expanded. */
  workspace: z.string().min(1).optional(),
  tools: toolsSchema.default(() => toolsSchema.parse({})),
  /** Which tool calls wait for the person's approval (docs/tools.md); absent: none do ("never"). */
  approvals: approvalsSchema.optional(),
});

export const replySchema = z.strictObject({
  session: sessionSchema.default(() => sessionSchema.parse({})),
  agent: agentSchema.default(() => agentSchema.parse({})),
});

export const groupChatSchema = z.strictObject({
  requireMention: z.boolean().default(true),
  mentionPatterns: z.array(z.string().min(1)).default([]),
  /** Unaddressed group messages in a row shown to the model as context with the next answered one (newest). */
  historyLimit: z.number().int().min(0).max(1000).default(50),
});

/** A transport's owner ids: strings, or numbers written as such (Telegram user ids), kept as strings. */
const ownerIds = z.array(
  z.union([
    z.string().trim().min(1),
    z
      .number()
      .int()
      .transform((n) => String(n)),
  ]),
);

export const inboundSchema = z.strictObject({
  /**
   * The owner, per transport: plugin id → ids in that transport's own terms (Telegram: user ids or "@username";
   * WhatsApp: E.164). Tools of the primary session run only for the owner. A transport not listed takes its
   * default (Telegram: the first user of telegram.allowFrom; WhatsApp: your own number), said in the start log.
   */
  owner: z.record(z.string().regex(/^[a-z0-9-]+$/, 'a plugin id like "telegram"'), ownerIds).default({}),
  /** WhatsApp senders allowed in direct chats (E.164, or "*" for everyone). Empty: only the own chat. */
  allowFrom: z
    .array(z.string().regex(/^(\*|\+[1-9][0-9]{5,15})$/, 'an E.164 number like "+4915123456789" or "*"'))
    .default([]),
  groupChat: groupChatSchema.default(() => groupChatSchema.parse({})),
  reply: replySchema.default(() => replySchema.parse({})),
});

/** `gateway.openai`: the OpenAI-compatible API on the gateway's port (docs/http-api.md, "OpenAI-compatible API"). */
export const openAiApiSchema = z.strictObject({
  /** Off by default: `/v1/*` answers 404 until this is true. */
  enabled: z.boolean().default(false),
  /** Tools the agent may use on this API's input (names, or "*"), under the owner's authority. Default none. */
  tools: z.array(z.string().min(1)).default([]),
});

export const gatewaySchema = z.strictObject({
  port: z.number().int().min(0).max(65535).default(18789),
  bind: z.string().min(1).default("127.0.0.1"),
  /** Replies waiting for a transport that is down longer than this are reported in the log and `/status`. */
  parkedReplyWarnSeconds: z.number().int().min(1).default(300),
  /** The IANA time zone reminders are read in ("Europe/Berlin"); absent: the machine's. */
  timeZone: z
    .string()
    .refine(isTimeZone, { message: 'an IANA time zone name, like "Europe/Berlin" or "UTC"' })
    .optional(),
  openai: openAiApiSchema.default(() => openAiApiSchema.parse({})),
});

export const pluginEntrySchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Validated by the plugin's own configSchema. */
  config: z.unknown().optional(),
});

export const pluginsSchema = z.strictObject({
  /** Extra plugins: folders (absolute, `~`, or relative to the config file) or package names. */
  load: z.array(z.string().min(1)).default([]),
  /** Per-plugin switches and settings, by plugin id. */
  entries: z.record(z.string(), pluginEntrySchema).default({}),
});

export const loggingSchema = z.strictObject({
  level: z.enum(["debug", "info", "warn", "error"]).default("info"),
});

export const configSchema = z.strictObject({
  $schema: z.string().optional(),
  inbound: inboundSchema.default(() => inboundSchema.parse({})),
  gateway: gatewaySchema.default(() => gatewaySchema.parse({})),
  plugins: pluginsSchema.default(() => pluginsSchema.parse({})),
  logging: loggingSchema.default(() => loggingSchema.parse({})),
});

export type ClawdisConfig = z.infer<typeof configSchema>;
export type SessionConfig = ClawdisConfig["inbound"]["reply"]["session"];
export type AgentConfig = ClawdisConfig["inbound"]["reply"]["agent"];

/** The configuration a fresh machine runs on: every default, nothing else. */
export function defaultConfig(): ClawdisConfig {
  return configSchema.parse({});
}
