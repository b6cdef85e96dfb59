/**
 * Which session a message belongs to (SPEC section 1). Pure.
 *
 * - an explicit `sessionKey` on the message (webhooks, `clawdis agent --session`) wins;
 * - `scope: "global"`: every message, groups included, goes to `global`;
 * - a direct chat from any transport goes to the one primary session, `mainKey` (default `main`);
 * - a group chat gets its own session, `group:<chatId>` (`group:12036302@g.us`, `group:-1001234`).
 *
 * The key only says where the memory lives; replies still go to the chat each message came from.
 */
export type SessionKind = "direct" | "group" | "global";

export const GLOBAL_SESSION_KEY = "global";
export const GROUP_KEY_PREFIX = "group:";

export interface SessionKeyInput {
  chatType: "direct" | "group";
  chatId: string;
  sessionKey?: string;
}

export interface SessionKeyConfig {
  scope: "per-sender" | "global";
  mainKey: string;
}

export function sessionKeyFor(message: SessionKeyInput, session: SessionKeyConfig): string {
  if (message.sessionKey !== undefined && message.sessionKey.length > 0) return message.sessionKey;
  if (session.scope === "global") return GLOBAL_SESSION_KEY;
  if (message.chatType === "direct") return session.mainKey;
  return `${GROUP_KEY_PREFIX}${message.chatId}`;
}

/**
 * The kind of a stored key, for listings: `mainKey` is direct even if someone named it oddly; `global` is
 * global; `group:<id>` is a group; any other key (a webhook's or `--session` key) counts as direct.
 */
export function sessionKindOf(key: string, mainKey = "main"): SessionKind {
  if (key === mainKey) return "direct";
  if (key === GLOBAL_SESSION_KEY) return "global";
  if (key.startsWith(GROUP_KEY_PREFIX)) return "group";
  return "direct";
}
