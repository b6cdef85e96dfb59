import type { LlmClient, LlmResult, LlmStreamRequest } from "../agent/llm-client.js";
import { linkedAbort } from "../core/linked-abort.js";

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
      // The call is ended through its owner's `cancel` when there is one (no controller of its own per call: an
      // AbortSignal is among the costlier things a message makes), else through a signal that follows the call's.
      const linked = request.cancel ? undefined : linkedAbort(request.signal);
      const signal = linked ? linked.controller.signal : request.signal;
      const end = request.cancel ?? ((reason: unknown) => linked?.controller.abort(reason));
      void gate.then(
        () => {
          open = true;
          for (const pass of held.splice(0)) pass();
        },
        () => {
          failed = true;
          held.length = 0;
          end("not accepted");
        },
      );
      const hold =
        (fn: ((text: string) => void) | undefined) =>
        (text: string): void => {
          if (!fn || failed) return;
          if (open) fn(text);
          else held.push(() => fn(text));
        };
      try {
        const result = await llm.stream({
          ...request,
          signal,
          onDelta: hold(request.onDelta),
          onReasoning: hold(request.onReasoning),
        });
        await gate;
        return result;
      } finally {
        linked?.dispose();
      }
    },
  };
}
