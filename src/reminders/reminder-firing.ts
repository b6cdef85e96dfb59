import { formatInZone } from "../core/time-zone.js";
import type { Authority } from "../plugin-api/types.js";
import type { InternalInput } from "../runtime/internal-input.js";
import type { Reminder } from "./reminder.js";
import type { Firing } from "./schedule.js";

/** The tool names a person of `authority` gets in a session (the tools policy applied to the tools there are). */
export type ToolNamesFor = (who: { authority: Authority; channel: string; senderId: string }) => string[];

/**
 * The tools of a reminder's turn: those of whoever set it, at most the owner's (SPEC section 7). An automated
 * setter passes on what its own turn had; a reminder with no setter (added by hand) counts as the owner's. Pure.
 */
export function reminderToolNames(reminder: Reminder, namesFor: ToolNamesFor): string[] {
  const owner = namesFor({ authority: "owner", channel: "", senderId: "" });
  const setBy = reminder.setBy;
  if (!setBy || setBy.authority === "owner") return owner;
  const theirs = setBy.authority === "automated" ? (reminder.tools ?? []) : namesFor(setBy);
  const ownerHas = new Set(owner);
  // An automated setter's "*" is whatever the owner has (bash only when listed by name, as for any non-owner).
  if (theirs.includes("*")) return owner.filter((name) => name !== "bash" || theirs.includes("bash"));
  return theirs.filter((name) => ownerHas.has(name));
}

/** The message id of a firing: the same for the same reminder and slot, so the journal takes it once. */
export function firingId(reminder: Reminder, firing: Firing): string {
  return `reminder:${reminder.id}:${reminder.createdAt}:${firing.slot}`;
}

/** What the session is told: the reminder's text, and for a late firing when it was due. Pure. */
export function firingText(reminder: Reminder, firing: Firing, timeZone: string): string {
  if (!firing.late) return reminder.text;
  const missed = firing.missedEarlier ? "; earlier repeats missed meanwhile were skipped" : "";
  return `${reminder.text}\n(late: this was due at ${formatInZone(firing.slot, timeZone)}, while the gateway was not running${missed})`;
}

/**
 * The internal input a firing becomes (`Gateway.submitInternal`): kind `reminder`, authority `automated`, in the
 * reminder's session (`primaryKey` when it names none), answered in its route (else the session's last chat).
 */
export function firingInput(
  reminder: Reminder,
  firing: Firing,
  context: { primaryKey: string; timeZone: string; tools: string[] },
): InternalInput {
  return {
    sessionKey: reminder.session ?? context.primaryKey,
    kind: "reminder",
    text: firingText(reminder, firing, context.timeZone),
    authority: "automated",
    allowedTools: context.tools,
    id: firingId(reminder, firing),
    ...(reminder.route ? { route: reminder.route } : {}),
  };
}
