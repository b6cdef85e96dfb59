import type { AuthorizeResult, InboundMessage } from "../../src/plugin-api/types.js";

/**
 * Whether `telegram.allowFrom` lets this message in. Deny by default: empty means nobody; `"*"` written out means
 * everybody; otherwise the sender's numeric user id, their `@username` (case-insensitive), or the chat's id (a
 * group listed by its id lets everyone in it talk). Pure and cheap: the gateway calls it for every message.
 */
export function authorizeSender(
  allowFrom: readonly (string | number)[],
  message: InboundMessage,
  username: string | undefined,
): AuthorizeResult {
  const entries = allowFrom.map((entry) => String(entry).toLowerCase());
  if (entries.includes("*")) return { allowed: true };
  if (entries.includes(message.senderId) || entries.includes(message.chatId)) return { allowed: true };
  if (username !== undefined && entries.includes(`@${username.toLowerCase()}`)) return { allowed: true };
  const who = username ? `${message.senderId} (@${username})` : message.senderId;
  return {
    allowed: false,
    reason: `sender ${who} is not in telegram.allowFrom; add ${message.senderId} there to let them talk to the agent`,
  };
}

/** The start-up lines about `allowFrom`: how to find your id when it is empty, a warning for `"*"`. */
export function allowFromWarnings(allowFrom: readonly (string | number)[]): string[] {
  if (allowFrom.length === 0) {
    return [
      "telegram.allowFrom is empty: nobody can talk to the bot. To find your user id, send the bot a message: " +
        'this log then says "sender <id> is not in telegram.allowFrom"; put that number (or your "@username") in ' +
        "telegram.allowFrom and save (a running gateway takes the change without a restart)",
    ];
  }
  if (allowFrom.some((entry) => entry === "*")) {
    return [
      'telegram.allowFrom has "*": everybody who finds the bot can talk to your agent and use its tools',
    ];
  }
  return [];
}
