import { timingSafeEqual } from "node:crypto";

/** Whether the webhook's secret header is the configured secret: every byte compared, in constant time. Pure. */
export function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
