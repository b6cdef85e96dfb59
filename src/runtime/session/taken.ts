import { describeError } from "../../core/errors.js";
import type { WorkItem } from "../work-item.js";

/** The message's journal record could not be made durable: it was not taken (see WorkItem.durable). */
export class NotTaken extends Error {
  constructor(cause: unknown) {
    super(`the message was not taken: ${describeError(cause)}`, { cause });
  }
}

/**
 * Waits until `item` is durably accepted; throws NotTaken when it was not (and marks the item refused). Every way
 * out to the person waits for this first.
 */
export async function taken(item: WorkItem): Promise<void> {
  if (!item.durable) return;
  try {
    await item.durable;
  } catch (error) {
    item.refused = true;
    throw new NotTaken(error);
  }
}
