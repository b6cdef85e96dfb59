import type { ThinkingLevel, VerboseLevel } from "../sessions/types.js";

/**
 * Chat commands (SPEC section 4), decided from the text alone. Pure.
 * - `/status`, `/stop`: exact (surrounding whitespace ignored, case-insensitive). Bare `stop` is a stop only while
 *   a turn runs; the caller decides that.
 * - `/think <level>`, `/verbose on|off`: directives. Alone they are confirmed in one line; followed by more text
 *   (`/think high what is 2+2`) the setting is saved and the rest goes to the agent. With no value (`/think`,
 *   `/verbose`) they ask for the session's current setting (`show-directive`, answered by `directiveState`).
 * - `/model` alone lists the endpoint's models; `/model <name>` sets the session's model, `/model default` goes back
 *   to the configured one (the name is one word, case kept).
 * - `/compact`: exact (case-insensitive), compacts the session's context now.
 * - Reset triggers are matched by `matchResetTrigger` (sessions/lifecycle), not here.
 */
export type ChatCommand =
  | { kind: "status" }
  | { kind: "stop"; bare: boolean }
  | { kind: "think"; level: ThinkingLevel; rest: string }
  | { kind: "verbose"; level: VerboseLevel; rest: string }
  | { kind: "show-directive"; directive: "think" | "verbose" }
  | { kind: "invalid-directive"; directive: "think" | "verbose"; given: string }
  | { kind: "model"; name?: string }
  | { kind: "compact" }
  | { kind: "none" };

const THINKING: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high"];

export function parseChatCommand(text: string): ChatCommand {
  const trimmed = text.trim();
  const lower = trimmed.toLowerCase();
  if (lower === "/status") return { kind: "status" };
  if (lower === "/stop") return { kind: "stop", bare: false };
  if (lower === "stop") return { kind: "stop", bare: true };
  if (lower === "/compact") return { kind: "compact" };
  const model = /^\/model(?:\s+(\S+))?$/i.exec(trimmed);
  if (model) return model[1] === undefined ? { kind: "model" } : { kind: "model", name: model[1] };
  const directive = /^\/(think|verbose)(?:\s+(\S+))?(?:\s+([\s\S]*))?$/i.exec(trimmed);
  if (directive) {
    const name = directive[1]!.toLowerCase() as "think" | "verbose";
    const value = (directive[2] ?? "").toLowerCase();
    const rest = directive[3] ?? "";
    if (value.length === 0) return { kind: "show-directive", directive: name };
    if (name === "think") {
      if ((THINKING as readonly string[]).includes(value))
        return { kind: "think", level: value as ThinkingLevel, rest };
      return { kind: "invalid-directive", directive: "think", given: value };
    }
    if (value === "on" || value === "off") return { kind: "verbose", level: value, rest };
    return { kind: "invalid-directive", directive: "verbose", given: value };
  }
  return { kind: "none" };
}

export function directiveUsage(directive: "think" | "verbose"): string {
  return directive === "think" ? `Usage: /think ${THINKING.join("|")}` : "Usage: /verbose on|off";
}

/**
 * The answer to `/think` or `/verbose` alone: the session's current setting (unset is "off", as `/status` shows
 * it) and how to change it. Pure.
 */
export function directiveState(
  directive: "think" | "verbose",
  entry: { thinkingLevel?: ThinkingLevel; verboseLevel?: VerboseLevel } | undefined,
): string {
  return directive === "think"
    ? `Thinking level: ${entry?.thinkingLevel ?? "off"}. Change it with /think ${THINKING.join("|")}.`
    : `Verbose: ${entry?.verboseLevel ?? "off"}. Change it with /verbose on|off.`;
}
