import type { InboundMessage, ReceiveResult, TurnOutcome } from "../plugin-api/types.js";
import type { WorkItem } from "./work-item.js";

/**
 * The work item of a message the journal took (`jid`; `durable` settles once its record is on disk), and what
 * `receive` answers for it: accepted, with the outcome its turn resolves.
 */
export function acceptedWork(
  written: { jid: string; durable: Promise<void> },
  accepted: { message: InboundMessage; sessionKey: string; local: boolean },
): { item: WorkItem; result: ReceiveResult } {
  let resolve!: (outcome: TurnOutcome) => void;
  const done = new Promise<TurnOutcome>((r) => {
    resolve = r;
  });
  const item: WorkItem = {
    jid: written.jid,
    sessionKey: accepted.sessionKey,
    message: accepted.message,
    text: accepted.message.text,
    local: accepted.local,
    durable: written.durable,
    resolve,
  };
  return { item, result: { status: "accepted", journalId: written.jid, done } };
}
