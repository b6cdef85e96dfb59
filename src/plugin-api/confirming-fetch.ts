import { confirmationRoute } from "../runtime/send-thread/confirm-routes.js";

export interface ConfirmingFetchOptions {
  /** The status with which the chat app answers a request it took (the Bot API: 200, only with `ok: true`). */
  takenStatus: number;
  /** The `fetch` for what the send thread does not take (a stream body, or no thread); default the built-in. */
  fetch?: typeof globalThis.fetch;
}

/**
 * A `fetch` for the request that delivers a message (Transport.send's last request), which calls `confirmed`
 * when the answer has `takenStatus`. When the core can, the request is made on the gateway's send thread, which
 * records the delivery durably the moment the answer arrives, whatever the main thread is busy with; a kill -9
 * after that does not send the message again (docs/runtime.md, "The send thread"). Otherwise (a body that is not a
 * string or bytes, a `confirmed` the outbox did not make, no send thread) it is `options.fetch`, and `confirmed`
 * records the delivery on the main thread.
 *
 * Contract: as `fetch`; the answer is read whole before it is returned when the thread made the request.
 */
export function confirmingFetch(
  confirmed: () => void,
  options: ConfirmingFetchOptions,
): typeof globalThis.fetch {
  const fallback = options.fetch ?? globalThis.fetch;
  return async (input, init) => {
    const route = confirmationRoute(confirmed);
    const body = init?.body;
    const plain =
      body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array;
    if (route?.thread.up && plain && (typeof input === "string" || input instanceof URL)) {
      const { answer, taken, seq } = await route.thread.fetch(
        String(input),
        init ?? {},
        options.takenStatus,
        route.lines(),
      );
      if (taken) {
        confirmed();
        void route.recorded().then(() => route.thread.recorded(seq));
      }
      return answer;
    }
    const answer = await fallback(input, init);
    if (answer.status === options.takenStatus) confirmed();
    return answer;
  };
}
