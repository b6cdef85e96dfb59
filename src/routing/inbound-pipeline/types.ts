import type { AuthorizeResult, InboundMessage, ReceiveResult } from "../../plugin-api/types.js";
import type { WorkItem } from "../../runtime/work-item.js";
import type { ChatCommand } from "../chat-command.js";

/**
 * One inbound message on its way through the pipeline. Steps read and fill it; a step that decides the message's
 * fate sets `result` (admission) or hands the item on (dispatch) and does not call `next`.
 */
export interface InboundContext {
  message: InboundMessage;
  /** From the gateway's own API (already authenticated by token): no transport authorizes it. */
  local: boolean;
  /**
   * Handed in by the core (`Gateway.submitInternal`): no transport authorizes it, its authority is kept as given.
   * Absent: any `internal` field on the message is removed.
   */
  internal?: boolean;
  /** The session key the message routes to (set by the session-key step). */
  sessionKey?: string;
  /** Set by the journal step once the message is durably accepted. */
  item?: WorkItem;
  /** What `receive` answers. */
  result?: ReceiveResult;
  /** The chat command the text is (set by the command step). */
  command?: ChatCommand;
  /** Items queued right behind this one, in order, in the same step (an approval's answer and what waited on it). */
  follow?: WorkItem[];
}

/** grammY-style middleware: do something, then `await next()` to go on (or not, to stop here). */
export type Step = (ctx: InboundContext, next: () => Promise<void>) => Promise<void>;

/** Runs the steps in order; each decides whether the next runs. */
export function compose(steps: readonly Step[]): (ctx: InboundContext) => Promise<void> {
  return (ctx) => {
    const run = (index: number): Promise<void> => {
      const step = steps[index];
      return step ? step(ctx, () => run(index + 1)) : Promise.resolve();
    };
    return run(0);
  };
}

/** What the admission steps need from the gateway. */
export interface AdmissionDeps {
  isDuplicate(message: InboundMessage): boolean;
  /** The transport that authorizes input of `channel` (starting or up), or undefined. */
  inputTransport(channel: string): { authorize(message: InboundMessage): AuthorizeResult } | undefined;
  sessionKeyFor(message: InboundMessage): string;
  /** Durably accepts the message (fsync'd) and builds its work item. */
  accept(ctx: InboundContext & { sessionKey: string }): Promise<{ item: WorkItem; result: ReceiveResult }>;
  logDenied(message: InboundMessage, reason: string): void;
}
