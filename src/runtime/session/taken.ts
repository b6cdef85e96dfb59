import { describeError } from "../../core/errors.js";

/**
 * The message's journal record could not be made durable: it was not taken (see WorkItem.durable). Thrown by
 * `taken` (apply-settlement.ts), which every way out to the person waits for first.
 */
export class NotTaken extends Error {
  constructor(cause: unknown) {
    super(`the message was not taken: ${describeError(cause)}`, { cause });
  }
}
