import type { GatewayEvent } from "../plugin-api/types.js";

/** What a live client may ask to see (`/api/events?filter=a,b`, `clawdis chat --attach`). */
export const OUTPUT_FILTERS = [
  "text",
  "textStreaming",
  "thinking",
  "toolCalls",
  "usage",
  "files",
  "processingState",
] as const;
export type OutputFilter = (typeof OUTPUT_FILTERS)[number];

/** The filter each event type belongs to; lifecycle events (turn start and end, notices, a new session) belong to none. */
const FILTER_OF: Record<GatewayEvent["type"], OutputFilter | undefined> = {
  message: "text",
  delta: "textStreaming",
  thinking: "thinking",
  "tool-call": "toolCalls",
  "tool-result": "toolCalls",
  usage: "usage",
  file: "files",
  processing: "processingState",
  "turn-start": undefined,
  "turn-end": undefined,
  notice: undefined,
  session: undefined,
};

/**
 * `?filter=` as a set, or a string saying what is wrong. Absent or empty: everything. Pure.
 */
export function parseOutputFilter(value: string | null): ReadonlySet<OutputFilter> | undefined | string {
  if (value === null || value.trim() === "") return undefined;
  const names = value
    .split(",")
    .map((n) => n.trim())
    .filter((n) => n.length > 0);
  const unknown = names.filter((n) => !(OUTPUT_FILTERS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    return `unknown filter ${unknown.map((n) => JSON.stringify(n)).join(", ")}; known: ${OUTPUT_FILTERS.join(", ")}`;
  }
  return new Set(names as OutputFilter[]);
}

/** Whether a client with `filter` sees `event`. Lifecycle events always pass (turn done, errors, notices). Pure. */
export function passesFilter(event: GatewayEvent, filter: ReadonlySet<OutputFilter> | undefined): boolean {
  if (filter === undefined) return true;
  const belongs = FILTER_OF[event.type];
  return belongs === undefined || filter.has(belongs);
}
