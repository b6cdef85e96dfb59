/**
 * The messages between the gateway's main thread and its send thread (send-thread.ts, send-thread-worker.ts).
 * Types only: the worker imports nothing but Node's own modules at run time.
 */

/** Given to the worker when it starts. */
export interface SendThreadData {
  /** The confirmations file (`Journal.confirmationsPath`): the worker appends to it, and only it does. */
  confirmationsPath: string;
}

/** Main → worker. */
export type ToSendThread =
  | {
      type: "send";
      seq: number;
      url: string;
      method: string;
      /** Lower-case names; `host`, `content-length` and basic auth from the URL are the worker's to add. */
      headers: [string, string][];
      body: string | Uint8Array | undefined;
      /** The status with which the chat app answers a request it took. */
      takenStatus: number;
      /** Journal lines appended to the confirmations file the moment the answer has `takenStatus`. */
      lines: string;
    }
  /** The request's signal aborted: the worker destroys it and answers nothing more for it. */
  | { type: "abort"; seq: number }
  /** The main thread's own journal record of `seq`'s delivery is written: its confirmation lines may go. */
  | { type: "recorded"; seq: number };

/** Worker → main. */
export type FromSendThread =
  | { type: "ready" }
  | {
      type: "answer";
      seq: number;
      status: number;
      statusText: string;
      headers: [string, string][];
      body: Uint8Array<ArrayBuffer>;
      /** Whether the answer had `takenStatus` (its lines were then appended, unless `writeError`). */
      taken: boolean;
      /** The lines could not be appended (a full disk): the main thread's own record is all there is. */
      writeError?: string;
    }
  | { type: "failed"; seq: number; name: string; message: string; code?: string };
