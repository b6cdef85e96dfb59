import type { Authority, OutboundButton } from "../../plugin-api/types.js";
import type { ApprovalAsk } from "../../sessions/approval-record.js";
import { interruptsTurn } from "../authority/authority.js";

/**
 * What a message does to a session's waiting approval (docs/tools.md, Answering). Pure, table-tested; the
 * approvals step (`approvals.ts`) carries it out.
 */

/** An answer in the chat: `/approve`, `/approve always [prefix*]`, `/deny [reason]`. */
export type ApprovalAnswer =
  | { kind: "approve" }
  | { kind: "approve-always"; pattern?: string }
  | { kind: "deny"; reason?: string };

/**
 * The answer `text` is, or undefined. A mention before it (`@bot /approve`, how a group addresses the bot) and a
 * Telegram `@bot` suffix on the command (`/approve@bot`) are allowed. Pure.
 */
export function parseApprovalAnswer(text: string): ApprovalAnswer | undefined {
  const match = /^(?:@\S+\s+)?\/(approve|deny)(?:@\S+)?(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!match) return undefined;
  const rest = (match[2] ?? "").trim();
  if (match[1]!.toLowerCase() === "deny") return rest ? { kind: "deny", reason: rest } : { kind: "deny" };
  if (rest.length === 0) return { kind: "approve" };
  const always = /^always(?:\s+([\s\S]*))?$/i.exec(rest);
  if (!always) return undefined;
  const pattern = (always[1] ?? "").trim();
  return pattern ? { kind: "approve-always", pattern } : { kind: "approve-always" };
}

/** Who sent a message, as the approvals step reads it. */
export interface AnswerSender {
  channel: string;
  senderId: string;
  authority: Authority;
  /** Handed in by the core (`Gateway.submitInternal`). */
  internal?: "approval-answer" | "other";
}

/**
 * What happens to a message in a session (with the oldest approval that waits there, if any):
 * - `pass`: on to the queue as usual (nothing waits, or it is the core's answer that resumes the batch);
 * - `nothing-waits`: an answer where nothing waits: told so;
 * - `decide`: an answer from the person whose turn it is, or from the owner;
 * - `ignore`: an answer from anyone else (a group member who is not that person): not answered, not queued;
 * - `wrote-instead`: anything else from that person: the waiting calls are refused ("you wrote instead") and the
 *   message joins the turn that goes on; on an automated turn, anything from the owner or an allowed person: the
 *   calls are refused, the resumed turn ends (`interruptsTurn`) and the message runs next;
 * - `hold`: anything else (automated input, another person): it waits until the approval is decided.
 * Automated input never answers or closes a prompt. Pure.
 */
export type AnswerRoute = "pass" | "nothing-waits" | "decide" | "ignore" | "wrote-instead" | "hold";

export function routeMessage(
  ask: Pick<ApprovalAsk, "requester"> | undefined,
  sender: AnswerSender,
  answer: ApprovalAnswer | undefined,
): AnswerRoute {
  if (sender.internal === "approval-answer") return "pass";
  const automated = sender.authority === "automated" || sender.internal !== undefined;
  if (!ask) return answer && !automated ? "nothing-waits" : "pass";
  if (automated) return "hold";
  const requester = ask.requester.channel === sender.channel && ask.requester.senderId === sender.senderId;
  if (answer) return requester || sender.authority === "owner" ? "decide" : "ignore";
  if (requester) return "wrote-instead";
  // An automated turn gives way to the owner or an allowed person (runtime/authority): its waiting calls are
  // refused and the turn it resumes ends at once, before the person's message.
  return interruptsTurn(ask.requester.authority, { authority: sender.authority, internal: false })
    ? "wrote-instead"
    : "hold";
}

/**
 * The approval a message in a session is routed by (`pending` oldest first): an answer goes to the oldest one its
 * sender may decide (its requester's, or any for the owner), else the oldest; anything else is routed by the oldest
 * of the session's own turns, since a sub-agent's approval (`subagent`) never holds or closes its parent's input.
 * Pure.
 */
export function askFor<A extends Pick<ApprovalAsk, "requester" | "subagent">>(
  pending: readonly A[],
  sender: Pick<AnswerSender, "channel" | "senderId" | "authority">,
  answer: ApprovalAnswer | undefined,
): A | undefined {
  if (!answer) return pending.find((a) => a.subagent === undefined);
  const mayDecide = (a: A) =>
    sender.authority === "owner" ||
    (a.requester.channel === sender.channel && a.requester.senderId === sender.senderId);
  return pending.find(mayDecide) ?? pending[0];
}

/** The reason the waiting calls get when their person wrote something else instead of answering. */
export const WROTE_INSTEAD = "you wrote instead";

/**
 * The note in the prompt's chat when a message came instead of an answer: to the turn's own person, that they
 * wrote instead; on an automated turn (its prompt in the owner's chat), who wrote and that the turn stopped. Pure.
 */
export function wroteInsteadNote(requester: Authority, who: string): string {
  return requester === "automated"
    ? `Not run: ${who} wrote, so the automated turn stopped.`
    : `Not run: ${WROTE_INSTEAD}.`;
}

/** The prompt for `ask`: what will run, and how to answer. Pure. */
export function promptText(ask: Pick<ApprovalAsk, "what" | "tool" | "waiting">): string {
  const always =
    ask.tool === "bash" ? ", /approve always (this exact command runs without asking from now on)" : "";
  const more =
    ask.waiting.length > 1 ? `\n(${ask.waiting.length - 1} more call(s) of this step wait behind it.)` : "";
  return `Approval needed: ${ask.what}${more}\nAnswer /approve${always} or /deny [reason].`;
}

/** The prompt's buttons (transports that have them): each hands in its answer's text. Pure. */
export function promptButtons(ask: Pick<ApprovalAsk, "tool">): OutboundButton[] {
  return [
    { text: "Approve", data: "/approve" },
    ...(ask.tool === "bash" ? [{ text: "Approve always", data: "/approve always" }] : []),
    { text: "Deny", data: "/deny" },
  ];
}

/** The line the answerer is told once the answer is taken. Pure. */
export function decidedText(ask: Pick<ApprovalAsk, "tool">, answer: ApprovalAnswer, added?: string): string {
  if (answer.kind === "deny") return `Denied: ${ask.tool} does not run.`;
  if (answer.kind === "approve-always" && added !== undefined)
    return `Approved: ${ask.tool} runs now; "${added}" is in the bash allowlist from now on.`;
  return `Approved: ${ask.tool} runs now.`;
}
