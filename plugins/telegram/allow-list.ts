import type { AuthorizeResult, InboundMessage, PluginContext } from "../../src/plugin-api/types.js";
import type { TelegramConfig } from "./config.js";

type Entry = string | number;

/**
 * Who the owner is on Telegram: `inbound.owner.telegram` when set (even empty: then nobody), else the first user
 * entry of `telegram.allowFrom` (a user id or `@username`; never `"*"`, never a group chat's negative id). Entries
 * lowercased, as they are matched. Pure.
 */
export function telegramOwners(
  allowFrom: readonly Entry[],
  configured: readonly Entry[] | undefined,
): { ids: string[]; source: "inbound.owner" | "allowFrom" } {
  if (configured !== undefined) return { ids: configured.map(lower), source: "inbound.owner" };
  const first = allowFrom.map(lower).find((entry) => entry !== "*" && !entry.startsWith("-"));
  return { ids: first === undefined ? [] : [first], source: "allowFrom" };
}

/**
 * Whether this message may come in, and with what authority. Deny by default. The owner (`owners`, see
 * `telegramOwners`, matched by user id or `@username`, case-insensitive) always may: `owner`. Otherwise
 * `telegram.allowFrom`: empty means nobody; the sender's user id or `@username` listed: `allowed`; let in only by
 * the chat's id (a group listed lets everyone in it talk) or by `"*"`: `untrusted`. Pure and cheap: the gateway
 * calls it for every message.
 */
export function authorizeSender(
  allowFrom: readonly Entry[],
  owners: readonly string[],
  message: InboundMessage,
  username: string | undefined,
): AuthorizeResult {
  const names = [message.senderId, ...(username !== undefined ? [`@${username.toLowerCase()}`] : [])];
  if (names.some((name) => owners.includes(name))) return { allowed: true, authority: "owner" };
  const entries = allowFrom.map(lower);
  if (names.some((name) => entries.includes(name))) return { allowed: true, authority: "allowed" };
  if (entries.includes("*") || entries.includes(message.chatId))
    return { allowed: true, authority: "untrusted" };
  const who = username ? `${message.senderId} (@${username})` : message.senderId;
  return {
    allowed: false,
    reason: `sender ${who} is not in telegram.allowFrom; add ${message.senderId} there to let them talk to the agent`,
  };
}

/** The start-up lines about `allowFrom`: how to find your id when it is empty, a warning for `"*"`. */
export function allowFromWarnings(allowFrom: readonly Entry[]): string[] {
  if (allowFrom.length === 0) {
    return [
      "telegram.allowFrom is empty: nobody can talk to the bot. To find your user id, send the bot a message: " +
        'this log then says "sender <id> is not in telegram.allowFrom"; put that number (or your "@username") in ' +
        "telegram.allowFrom and save (a running gateway takes the change without a restart)",
    ];
  }
  if (allowFrom.some((entry) => entry === "*")) {
    return [
      'telegram.allowFrom has "*": everybody who finds the bot can talk to your agent (without tools: those are the owner\'s)',
    ];
  }
  return [];
}

/**
 * The start-up line that says who the owner is (said again when `telegram.allowFrom` or `inbound.owner` changes);
 * none while `allowFrom` is empty and no owner is set (`allowFromWarnings` says what to do then). Pure.
 */
export function ownerLine(
  allowFrom: readonly Entry[],
  configured: readonly Entry[] | undefined,
): { level: "info" | "warn"; text: string } | undefined {
  const { ids, source } = telegramOwners(allowFrom, configured);
  if (ids.length > 0) {
    const why =
      source === "inbound.owner"
        ? "inbound.owner.telegram"
        : "the first of telegram.allowFrom; set inbound.owner to change";
    return { level: "info", text: `owner on telegram: ${ids.join(", ")} (${why})` };
  }
  if (source === "inbound.owner") {
    return {
      level: "warn",
      text: "inbound.owner.telegram is empty: nobody on telegram is the owner, so the primary session's tools run for nobody there",
    };
  }
  if (allowFrom.length === 0) return undefined;
  return {
    level: "warn",
    text:
      'no owner on telegram: telegram.allowFrom names no user (only "*" or group chats), so the primary ' +
      "session's tools run for nobody there; set inbound.owner.telegram to your user id",
  };
}

function lower(entry: Entry): string {
  return String(entry).toLowerCase();
}

/** Says who the owner is on Telegram (at start, and when `telegram.allowFrom` or `inbound.owner` changes). */
export function logOwner(
  context: Pick<PluginContext<TelegramConfig>, "config" | "gatewayConfig" | "id" | "logger">,
): void {
  const line = ownerLine(context.config.allowFrom, context.gatewayConfig.inbound.owner[context.id]);
  if (line) context.logger[line.level](line.text);
}
