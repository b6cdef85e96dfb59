import type { TurnOutcome } from "./types.js";

/** The JSON answer of a finished turn, as `POST /api/agent` and `clawdis agent --json` give it (docs/http-api.md). */
export interface OutcomeBody {
  payloads: { text: string }[];
  meta: {
    durationMs: number;
    model: string | null;
    usage: TurnOutcome["usage"] | null;
    stopReason: TurnOutcome["stopReason"];
    sessionKey: string;
    sessionId: string;
    error?: string;
  };
}

/** Converts a turn's outcome to the API's JSON body; shared by the gateway API and plugins that answer HTTP. */
export function outcomeBody(outcome: TurnOutcome): OutcomeBody {
  return {
    payloads: outcome.payloads,
    meta: {
      durationMs: outcome.durationMs,
      model: outcome.model ?? null,
      usage: outcome.usage ?? null,
      stopReason: outcome.stopReason,
      sessionKey: outcome.sessionKey,
      sessionId: outcome.sessionId,
      ...(outcome.error ? { error: outcome.error } : {}),
    },
  };
}
