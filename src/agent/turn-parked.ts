/** A turn that stopped at a tool call its gate asked about; the batch waits in the transcript. */
export interface TurnParked {
  readonly callId: string;
  readonly name: string;
  readonly arguments: string;
  readonly reason: string;
}
