import type { Authority, AuthorizeResult, InboundMessage } from "../../plugin-api/types.js";

/**
 * Who starts a turn, and who ends one (SPEC section 7, Authority; docs/tools.md, "Who starts a turn"). Every input
 * carries its authority; a turn keeps the one it started with. Pure: these decide, the session worker carries
 * them out.
 */
export type { Authority };

/**
 * The authority an input is accepted with, from the message and where it came from:
 * - `automated` for input no person typed (webhooks; the core's own: a reminder, a job's result, a sub-agent's
 *   notice), whoever hands it in;
 * - `owner` for the gateway's own API (token holders: web chat, terminal, `clawdis agent`);
 * - otherwise what the message's transport said of its sender (`verdict`, from its config: the owner ids are
 *   `owner`, the allowlist `allowed`, a member of an allowed group or anyone under `"*"` `untrusted`); a verdict
 *   that names none counts as `allowed`.
 * Also what a journal record from before authorities gets (never the owner's for a transport's message).
 */
export function classifyAuthority(input: {
  message: Pick<InboundMessage, "automated">;
  local: boolean;
  verdict?: AuthorizeResult;
}): Authority {
  if (input.message.automated) return "automated";
  if (input.local) return "owner";
  const { verdict } = input;
  return (verdict?.allowed && verdict.authority) || "allowed";
}

/** A person the agent answers to in full: the owner or someone on the allowlist (not an untrusted member). */
export function isTrustedPerson(authority: Authority): boolean {
  return authority === "owner" || authority === "allowed";
}

/** What the rules read of an input that waits behind a running turn. */
export interface WaitingInput {
  authority: Authority;
  /** Handed in by the core (`InboundMessage.internal`: a reminder, an approval's answer, …): never a person typing. */
  internal: boolean;
}

/**
 * Whether `waiting` ends a running turn of `running` authority after its current tool batch: only an automated
 * turn ends, and only for the owner or an allowed person writing (not an untrusted person, not other automated
 * input, not the core's own input such as an approval's answer, which the person's turn it resumes owns).
 */
export function interruptsTurn(running: Authority, waiting: WaitingInput): boolean {
  return running === "automated" && !waiting.internal && isTrustedPerson(waiting.authority);
}

/**
 * The name of an automated input's source, as the model is told it (`reminder`, `webhook`, …); an approval's
 * answer that resumed an automated turn is named as such (its own source is not kept with it).
 */
export function automatedSource(message: Pick<InboundMessage, "channel" | "internal">): string {
  const kind = message.internal?.kind;
  if (kind === "approval-answer") return "resumed after an approval";
  return kind ?? message.channel;
}

/**
 * The note the next turn's model calls carry after an automated turn a person ended (kept in the transcript as a
 * `turn-interrupted` entry, shown to the model in its place).
 */
export function interruptedNote(source: string): string {
  return `[The automated turn above (${source}) stopped unfinished: a person wrote, so its remaining steps were not run. Answer the person; do not go on with that work unless they ask.]`;
}

/** The result a call of an interrupted automated turn gets when it did not run (or was cut short). */
export const NOT_RUN_INTERRUPTED =
  "Not run: a person wrote, and this automated turn stopped before this call ran.";
export const CUT_SHORT_INTERRUPTED =
  "Cut short: a person wrote, and this automated turn stopped while this call ran; it may have done part of its work.";
