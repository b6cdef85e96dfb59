/**
 * Requests to stop or restart the gateway from inside (`POST /api/stop`, `POST /api/restart`), handed to whoever
 * runs it (the CLI's serve loop and supervisor), which acts on them.
 */

/** Why the gateway is asked to stop from inside (`POST /api/stop`): the CLI's `serve` loop acts on it. */
export interface StopRequest {
  why: string;
}

/** What whoever runs the gateway answers to `POST /api/restart`: taken (the restart follows), or why not. */
export type RestartAnswer = { accepted: true } | { accepted: false; status: number; error: string };

export class ControlRequests {
  private readonly stopListeners = new Set<(request: StopRequest) => void>();
  private restartHandler: ((why: string) => Promise<RestartAnswer>) | undefined;

  /** Tells every stop listener. */
  requestStop(request: StopRequest): void {
    for (const listener of this.stopListeners) listener(request);
  }

  onStopRequest(listener: (request: StopRequest) => void): () => void {
    this.stopListeners.add(listener);
    return () => this.stopListeners.delete(listener);
  }

  /** The restart handler's answer; 409 while the gateway stops, 501 when no one handles restarts. */
  requestRestart(why: string, stopping: boolean): Promise<RestartAnswer> {
    if (stopping) return Promise.resolve({ accepted: false, status: 409, error: "the gateway is stopping" });
    if (!this.restartHandler) {
      return Promise.resolve({
        accepted: false,
        status: 501,
        error: "this gateway cannot restart in-process",
      });
    }
    return this.restartHandler(why);
  }

  handleRestartRequests(handler: (why: string) => Promise<RestartAnswer>): void {
    this.restartHandler = handler;
  }
}
