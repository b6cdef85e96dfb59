import { describeError } from "../core/errors.js";
import type { StoredToolCall } from "../sessions/types.js";
import { redactArguments } from "./redact-arguments.js";
import type { ToolOutcome } from "./turn-hooks.js";
import type { TurnInput } from "./turn-types.js";
import { Watchdog } from "./watchdog.js";

/**
 * Runs one tool call under the tool watchdog (`toolExecutionSeconds` until its result, started over by each
 * `ToolContext.progress()` the tool reports before it fires). Never throws: an
 * unknown tool, arguments that are not a JSON object, a thrown error and a timeout are failed outcomes the model
 * reads. A tool that ignores its signal is left behind: the turn goes on when the signal aborts.
 */
export async function executeTool(
  call: StoredToolCall,
  input: Pick<TurnInput, "tools" | "timeouts" | "clock" | "signal" | "cwd" | "sessionKey" | "attach" | "log">,
): Promise<ToolOutcome> {
  input.log?.debug("tool call", {
    session: input.sessionKey,
    tool: call.function.name,
    arguments: redactArguments(call.function.arguments),
  });
  const tool = input.tools.find((t) => t.name === call.function.name);
  if (!tool) {
    const names = input.tools.map((t) => t.name).join(", ") || "none";
    return { ok: false, output: `Unknown tool "${call.function.name}". Available tools: ${names}.` };
  }
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = call.function.arguments.trim() === "" ? {} : JSON.parse(call.function.arguments);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new Error("not an object");
    args = parsed as Record<string, unknown>;
  } catch (error) {
    return {
      ok: false,
      output: `The arguments are not a JSON object (${describeError(error)}). Send valid JSON.`,
    };
  }
  const seconds = input.timeouts.toolExecutionSeconds;
  const watchdog = new Watchdog(input.clock, input.signal);
  watchdog.arm("tool", seconds);
  const timedOut = (): ToolOutcome => ({
    ok: false,
    output: `${call.function.name} timed out after ${seconds} s.`,
    timedOut: true,
  });
  let settled = false;
  try {
    const outcome = await Promise.race([
      tool.execute(args, {
        signal: watchdog.signal,
        cwd: input.cwd,
        sessionKey: input.sessionKey,
        timeoutMs: seconds * 1000,
        // Each streamed item starts the deadline over; after it fired (or the turn stopped) nothing revives it.
        progress: () => {
          if (!settled && !watchdog.signal.aborted) watchdog.arm("tool", seconds);
        },
        ...(input.attach ? { attach: input.attach } : {}),
      }),
      whenAborted(watchdog.signal),
    ]);
    if (watchdog.fired()) return timedOut();
    if (outcome === undefined) return { ok: false, output: `${call.function.name} was stopped.` };
    return { ok: outcome.ok, output: outcome.output };
  } catch (error) {
    if (watchdog.fired()) return timedOut();
    return { ok: false, output: `${call.function.name} failed: ${describeError(error)}` };
  } finally {
    settled = true;
    watchdog.dispose();
  }
}

/** Resolves (with undefined) when the signal aborts; never rejects. */
function whenAborted(signal: AbortSignal): Promise<undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", () => resolve(undefined), { once: true });
  });
}
