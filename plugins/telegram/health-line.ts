import type { TransportHealth } from "../../src/plugin-api/types.js";

/** What the transport knows about itself, for `/status` and `clawdis status`. */
export interface TelegramSnapshot {
  phase: "starting" | "running" | "conflict" | "rate-limited" | "offline" | "stopped";
  mode: "polling" | "webhook";
  username?: string;
  /** Epoch ms of the last successful getUpdates (polling) or webhook update. */
  lastOkAt?: number;
  lastError?: { message: string; at: number };
  /** getMe said can_read_all_group_messages: false. */
  privacyMode?: boolean;
}

/** Said once in the start log. */
export const PRIVACY_NOTE =
  "privacy mode on: in groups the bot sees only /commands, @mentions of it and replies to it (turn it off with @BotFather /setprivacy to keep group context)";

/** The same, short enough for `/status` on a phone (docs/telegram.md says how to turn it off). */
export const PRIVACY_SHORT = "privacy mode on: in groups it sees only commands, mentions and replies";

/**
 * One line of health. Pure. `offline` (Telegram unreachable) is `down`, so replies wait in the core's outbox
 * until a poll succeeds again; a 409 or a rate limit is `degraded` (sending still works).
 */
export function healthLine(snapshot: TelegramSnapshot, now: number): TransportHealth {
  const parts: string[] = [];
  if (snapshot.username) parts.push(`@${snapshot.username}`);
  parts.push(snapshot.mode === "polling" ? "long polling" : "webhook");
  const what = snapshot.mode === "polling" ? "last poll" : "last update";
  parts.push(snapshot.lastOkAt === undefined ? `no ${what} yet` : `${what} ${ago(now - snapshot.lastOkAt)}`);
  if (snapshot.lastError)
    parts.push(`last error ${ago(now - snapshot.lastError.at)}: ${snapshot.lastError.message}`);
  if (snapshot.privacyMode) parts.push(PRIVACY_SHORT);
  const detail = parts.join("; ");
  const state =
    snapshot.phase === "running"
      ? "ok"
      : snapshot.phase === "conflict" || snapshot.phase === "rate-limited"
        ? "degraded"
        : snapshot.phase === "offline"
          ? "down"
          : snapshot.phase;
  return { state, detail };
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  return `${Math.floor(s / 3600)}h ago`;
}
