import type { ApprovalDecision } from "../plugin-api/types.js";

/** A turn that stopped at a tool call its gate asked about; the batch waits in the transcript. */
export interface TurnParked {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
  readonly reason: string;
}

/** The answer to a parked call: run it, or not (the model is told `reason`). */
export type ParkedDecision = ApprovalDecision;

/** The result a parked call the answer refused gets. */
export function notRunDenied(reason: string): string {
  return `Not run: this call was not approved (${reason}).`;
}
