import type { WorkItem } from "../work-item.js";

/**
 * The drain signal of one automated turn (`TurnInput.drain`): aborted by the worker's drain (a stop or a restart)
 * or by a person who wrote meanwhile (`by`, called at a tool-batch boundary: the first one counts, and none once
 * the gateway drains). `who` names that person (`channel:senderId`) once set: the turn then settles
 * `interrupted`, not as a drained turn that resumes.
 */
export class Interruption {
  private readonly controller = new AbortController();
  readonly drain: AbortSignal;
  who: string | undefined;

  constructor(workerDrain: AbortSignal) {
    this.drain = AbortSignal.any([workerDrain, this.controller.signal]);
  }

  by(item: WorkItem): void {
    if (this.who !== undefined || this.drain.aborted) return;
    this.who = `${item.message.channel}:${item.message.senderId}`;
    this.controller.abort("interrupted");
  }
}
