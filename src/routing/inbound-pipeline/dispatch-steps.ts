import type { ClawdisConfig } from "../../core/config-schema.js";
import type { InboundMessage } from "../../plugin-api/types.js";
import type { WorkItem } from "../../runtime/work-item.js";
import type { Step } from "./types.js";

type GroupChatConfig = ClawdisConfig["inbound"]["groupChat"];

/**
 * The dispatch steps, after the journal: mention gate (with group context) -> immediate commands
 * (command-step.ts) -> enqueue. They run after `receive` has answered; every accepted message ends up in its
 * session's queue or answered.
 */

/**
 * Whether a group message addresses the agent: the transport said so (`mentioned`: an @mention, a reply to the
 * agent, `/cmd@bot`), or `requireMention` is off, or the text matches one of `mentionPatterns` (a regular
 * expression, case-insensitive; a pattern that is not one is matched as plain text). Pure.
 */
export function isAddressed(message: InboundMessage, group: GroupChatConfig): boolean {
  if (!group.requireMention || message.mentioned || message.replyTo?.fromAgent) return true;
  return group.mentionPatterns.some((pattern) => {
    try {
      return new RegExp(pattern, "i").test(message.text);
    } catch {
      return message.text.toLowerCase().includes(pattern.toLowerCase());
    }
  });
}

/**
 * A group message that does not address the agent is not answered: it goes to its session as context only (kept
 * in the transcript, shown to the model with the next answered message). Automated and internal input always pass.
 */
export function mentionGateStep(deps: { groupChat(): GroupChatConfig; enqueue(item: WorkItem): void }): Step {
  return async (ctx, next) => {
    const item = ctx.item;
    if (!item) throw new Error("mentionGateStep runs after the journal step");
    if (
      ctx.message.chatType === "group" &&
      !ctx.message.automated &&
      !ctx.message.internal &&
      !isAddressed(ctx.message, deps.groupChat())
    ) {
      item.contextOnly = true;
      deps.enqueue(item);
      return;
    }
    await next();
  };
}

/** The session's queue: one turn at a time per key, in order; `ctx.follow` right behind the item. */
export function enqueueStep(deps: { enqueue(item: WorkItem): void }): Step {
  return async (ctx) => {
    if (!ctx.item) throw new Error("enqueueStep runs after the journal step");
    deps.enqueue(ctx.item);
    for (const item of ctx.follow ?? []) deps.enqueue(item);
  };
}
