import type { InboundMessage } from "../plugin-api/types.js";
import { authorityOf } from "../routing/inbound-pipeline/admission-steps.js";
import type { OpenRecord } from "../sessions/journal.js";
import type { WorkItem } from "./work-item.js";

/**
 * The work item that finishes a message the last run left open in the journal (docs/runtime.md, The journal).
 * Pure. A record from before version 2 does not say whether it came from the local API: then a channel no plugin
 * has is the local API's. The turn keeps the authority the message was accepted with; a record from before
 * authorities gets the safe one (`authorityOf`: never the owner's for a transport's message).
 */
export function replayItem(
  record: OpenRecord,
  deps: { hasPlugin(channel: string): boolean; sessionKeyFor(message: InboundMessage): string },
): WorkItem {
  const local = record.local ?? !deps.hasPlugin(record.message.channel);
  const message = {
    ...record.message,
    authority: record.message.authority ?? authorityOf(record.message, local),
  };
  return {
    jid: record.jid,
    sessionKey: deps.sessionKeyFor(record.message),
    message,
    text: record.message.text,
    local,
    restored: record,
    resolve: () => {},
  };
}
