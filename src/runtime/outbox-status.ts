import { formatAge } from "../core/format.js";
import type { Undeliverable } from "./outbox.js";

/** How many given-up deliveries the `/status` line names (the newest); the rest are counted. */
const NAMED = 3;

/**
 * The `/status` line about replies given up because their chat refused them for good (Outbox.undeliverable),
 * newest first, e.g. "Not delivered: 1 reply — telegram chat 42, 5m ago: Telegram says 403: Forbidden: bot was
 * blocked by the user". Undefined when there are none. Pure.
 */
export function undeliverableLine(list: readonly Undeliverable[], now: number): string | undefined {
  if (list.length === 0) return undefined;
  const named = [...list]
    .reverse()
    .slice(0, NAMED)
    .map((u) => `${u.channel} chat ${u.chatId}, ${formatAge(now - u.at)} ago: ${u.reason}`);
  const more = list.length > NAMED ? ` (and ${list.length - NAMED} more)` : "";
  const count = `${list.length} ${list.length === 1 ? "reply" : "replies"}`;
  return `Not delivered: ${count} refused by the chat — ${named.join("; ")}${more}`;
}
