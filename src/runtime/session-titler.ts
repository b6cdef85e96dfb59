import type { LlmClient } from "../agent/llm-client.js";
import { Watchdog } from "../agent/watchdog.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { GatewayEvent } from "../plugin-api/types.js";
import { sessionModel } from "../sessions/session-model.js";
import { cleanTitle, firstExchange, titleMessages } from "../sessions/session-title.js";
import type { SessionStore } from "../sessions/store.js";
import { readTranscriptForResume } from "../sessions/transcript.js";

export interface SessionTitlerDeps {
  store: SessionStore;
  clock: Clock;
  logger: Logger;
  llm: () => LlmClient | undefined;
  /** The configured model (the session's own `/model` goes first). */
  model: () => string | undefined;
  sidecarSeconds: () => number;
  /** `inbound.reply.session.titles`, read at each turn's end. */
  enabled: () => boolean;
  /** Resolves once the session's last turn's store update is written (its title is written after it). */
  recorded: (key: string) => Promise<void>;
}

/** Raised inside the store update when the entry is no longer the one to title. */
class Unchanged extends Error {}

/** The most title calls in flight at once (the rest are skipped: a title is best effort). */
const MAX_IN_FLIGHT = 2;
/** The longest title answer asked for, in tokens. */
const TITLE_MAX_OUTPUT_TOKENS = 32;

/**
 * Names sessions (docs/sessions.md, Titles): at the end of a turn that ended well (`turn-end`, `end`), a session
 * id whose entry has no `title` and whose transcript holds its first exchange gets one sidecar call (within
 * `sidecarLlmSeconds`), and the answer, cleaned (session-title.ts), is stored on the entry if the key still holds
 * that session id and no title. It runs after the reply went out and never holds a turn back; a failure is
 * logged at debug and not tried again while the gateway runs. `stop` aborts the calls in flight.
 */
export class SessionTitler {
  /** Session ids tried while this gateway runs (once each). */
  private readonly tried = new Set<string>();
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private stopped = false;

  constructor(private readonly deps: SessionTitlerDeps) {}

  onEvent(event: GatewayEvent): void {
    if (event.type !== "turn-end" || event.stopReason !== "end" || this.stopped) return;
    if (!this.deps.enabled() || this.inFlight.size >= MAX_IN_FLIGHT) return;
    const key = event.sessionKey;
    if (this.inFlight.has(key)) return;
    const controller = new AbortController();
    const done = this.title(key, controller.signal)
      .catch((error: unknown) =>
        this.deps.logger.debug("session title failed", { sessionKey: key, error: String(error) }),
      )
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, { controller, done });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const call of this.inFlight.values()) call.controller.abort();
    await Promise.all([...this.inFlight.values()].map((call) => call.done));
  }

  private async title(key: string, signal: AbortSignal): Promise<void> {
    await this.deps.recorded(key);
    const entry = await this.deps.store.get(key);
    if (!entry || typeof entry.title === "string" || this.tried.has(entry.sessionId)) return;
    const llm = this.deps.llm();
    const model = sessionModel(entry, this.deps.model());
    if (!llm || !model) return;
    const resume = await readTranscriptForResume(this.deps.store.transcriptPath(entry.sessionId));
    // Resuming reads from the newest compaction on: a compacted session's first exchange is not there (no title).
    const exchange = firstExchange(resume.entries);
    if (!exchange) return;
    this.tried.add(entry.sessionId);
    const watchdog = new Watchdog(this.deps.clock, signal);
    watchdog.arm("sidecar", this.deps.sidecarSeconds());
    let raw: string;
    try {
      const result = await llm.stream({
        model,
        messages: titleMessages(exchange),
        maxOutputTokens: TITLE_MAX_OUTPUT_TOKENS,
        signal: watchdog.signal,
      });
      const fired = watchdog.fired();
      if (fired) throw fired;
      if (!result.ok) throw new Error(result.error);
      raw = result.text;
    } finally {
      watchdog.dispose();
    }
    const title = cleanTitle(raw);
    if (title === undefined) throw new Error("the model answered no title");
    try {
      await this.deps.store.update(key, (current) => {
        // The key moved on (a new session id) or was titled meanwhile: nothing is written.
        if (!current || current.sessionId !== entry.sessionId || typeof current.title === "string")
          throw new Unchanged();
        return { ...current, title };
      });
    } catch (error) {
      if (error instanceof Unchanged) return;
      throw error;
    }
    this.deps.logger.debug("session titled", { sessionKey: key, sessionId: entry.sessionId, title });
  }
}
