import type { AuthorizeResult, InboundMessage } from "../../src/plugin-api/types.js";

/** What `authorizeSender` decides on: the settings of now and what the connection knows. */
export interface WhatsappAuthorization {
  /** `inbound.allowFrom`: E.164 numbers allowed in direct chats, or `"*"`. */
  allowFrom: readonly string[];
  /** `inbound.owner.whatsapp`: E.164 numbers who are the owner besides the account's own (absent: none). */
  owners: readonly string[] | undefined;
  /** The linked account's own number (E.164), once known. */
  ownNumber: string | undefined;
  /** The sender is a LID whose phone number WhatsApp has not told (it cannot match a number). */
  senderIsLid: boolean;
}

/**
 * Whether a WhatsApp message may come in, and with what authority. Pure.
 * - the owner: the account's own number (your own chat, "Message yourself") and `inbound.owner.whatsapp`;
 *   always let in;
 * - direct chats: a number in `inbound.allowFrom` is `allowed`; under `"*"` anyone else is `untrusted`; the
 *   rest is denied;
 * - groups: every member may talk (being in the group is the opt-in): `allowed` when `inbound.allowFrom` lists
 *   them, else `untrusted`.
 */
export function authorizeSender(settings: WhatsappAuthorization, message: InboundMessage): AuthorizeResult {
  const sender = message.senderId;
  if (sender === settings.ownNumber || (settings.owners ?? []).includes(sender))
    return { allowed: true, authority: "owner" };
  if (settings.allowFrom.includes(sender)) return { allowed: true, authority: "allowed" };
  if (message.chatType === "group" || settings.allowFrom.includes("*"))
    return { allowed: true, authority: "untrusted" };
  if (settings.senderIsLid) {
    return {
      allowed: false,
      reason: `sender ${sender} writes as a LID whose phone number WhatsApp has not told us; it cannot match inbound.allowFrom`,
    };
  }
  return { allowed: false, reason: `sender ${sender} is not in inbound.allowFrom` };
}

/** The log lines, once linked, that say who the owner is on WhatsApp (and which owner ids can never match). Pure. */
export function ownerLines(
  ownNumber: string | undefined,
  owners: readonly string[] | undefined,
): { level: "info" | "warn"; text: string }[] {
  const own = ownNumber ? [`${ownNumber} (your own number)`] : [];
  const listed = (owners ?? []).map((id) => `${id} (inbound.owner.whatsapp)`);
  const lines: { level: "info" | "warn"; text: string }[] = [
    {
      level: "info",
      text: `owner on whatsapp: ${[...own, ...listed].join(", ") || "nobody"}${listed.length === 0 ? "; set inbound.owner.whatsapp to add others" : ""}`,
    },
  ];
  (owners ?? []).forEach((id, i) => {
    if (!/^\+[1-9][0-9]{5,15}$/.test(id)) {
      lines.push({
        level: "warn",
        text: `inbound.owner.whatsapp[${i}] "${id}" is not an E.164 number like "+4915123456789": it matches nobody`,
      });
    }
  });
  return lines;
}
