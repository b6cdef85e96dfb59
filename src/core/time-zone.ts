/** The time zone reminders are read in: `gateway.timeZone`, else the machine's (docs/configuration.md). */

/** Whether `name` is an IANA time zone name this Node knows ("Europe/Berlin", "UTC"). Pure. */
export function isTimeZone(name: string): boolean {
  if (name.trim() === "") return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The machine's own time zone (as Node reports it; "UTC" when it reports none). */
export function machineTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** `gateway.timeZone` when set, else the machine's. */
export function effectiveTimeZone(configured: string | undefined): string {
  return configured ?? machineTimeZone();
}

/**
 * `epochMs` as local wall time in `timeZone`, `YYYY-MM-DD HH:MM:SS` followed by the zone's short name (for lists and
 * the note of a late firing). Pure.
 */
export function formatInZone(epochMs: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "short",
  }).formatToParts(new Date(epochMs));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}:${get("second")} ${get("timeZoneName")}`;
}
