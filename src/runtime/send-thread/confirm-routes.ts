import type { SendThread } from "./send-thread.js";

/**
 * How a `confirmed` callback that the outbox hands a transport (Transport.send) is recorded off the main thread:
 * the send thread to make the request on, the journal lines that record the delivery, and the main thread's own
 * record once `confirmed` was called (then the thread may drop its copy).
 */
export interface ConfirmationRoute {
  thread: SendThread;
  /** The journal lines of the delivery's records (made when asked: only a request on the thread asks). */
  lines(): string;
  /** The main thread's record of the delivery, written in `confirmed`; resolves once it is (never rejects). */
  recorded(): Promise<void>;
}

const routes = new WeakMap<() => void, ConfirmationRoute>();

/** Registers `route` for `confirmed` (the outbox, before it hands `confirmed` to a transport). */
export function routeConfirmation(confirmed: () => void, route: ConfirmationRoute): void {
  routes.set(confirmed, route);
}

/** The route registered for `confirmed`, if any (confirming-fetch.ts). */
export function confirmationRoute(confirmed: () => void): ConfirmationRoute | undefined {
  return routes.get(confirmed);
}
