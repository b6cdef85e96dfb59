import type { LlmClient, LlmResult, LlmStreamRequest } from "../agent/llm-client.js";

/**
 * `llm` whose answers reach the turn only once `ready` resolves (the message's journal record is on disk): the
 * request goes out at once, so the fsync and the model's prefill overlap, but the answer's text and reasoning
 * deltas are held until then (in order), and the result (with its tool calls) is returned only then. When
 * `ready` rejects, the request is cancelled and `stream` rejects with that error: nothing of the answer was
 * passed on. Watchdog callbacks (first token, progress, chunk kinds) pass at once: they are not output.
 */
export function gatedLlm(llm: LlmClient, ready: () => Promise<void>): LlmClient {
  return {
    baseUrl: llm.baseUrl,
    listModels: (signal) => llm.listModels(signal),
    stream: async (request: LlmStreamRequest): Promise<LlmResult> => {
      const gate = ready();
      let open = false;
      let failed = false;
      const held: (() => void)[] = [];
      const cancel = new AbortController();
      void gate.then(
        () => {
          open = true;
          for (const pass of held.splice(0)) pass();
        },
        () => {
          failed = true;
          held.length = 0;
          cancel.abort("not accepted");
        },
      );
      const hold =
        (fn: ((text: string) => void) | undefined) =>
        (text: string): void => {
          if (!fn || failed) return;
          if (open) fn(text);
          else held.push(() => fn(text));
        };
      // The turn's own cancellation still cancels the request (no AbortSignal.any: engines allow Node 20.0).
      const forward = () => cancel.abort(request.signal.reason);
      if (request.signal.aborted) forward();
      else request.signal.addEventListener("abort", forward, { once: true });
      try {
        const result = await llm.stream({
          ...request,
          signal: cancel.signal,
          onDelta: hold(request.onDelta),
          onReasoning: hold(request.onReasoning),
        });
        await gate;
        return result;
      } finally {
        request.signal.removeEventListener("abort", forward);
      }
    },
  };
}
