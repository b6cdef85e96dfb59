// Over 400 lines: the worker is the session's one actor — its way (prepare, turn) and the one place it settles —
// and splitting the way across files is what the walk of one message measures against (docs/runtime.md).
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import type { LlmClient } from "../../agent/llm-client.js";
import { runTurn, type TurnInput, type TurnResult } from "../../agent/run-turn.js";
import { noModelReply } from "../../core/no-model-hint.js";
import type { TurnOutcome } from "../../plugin-api/types.js";
import { matchResetTrigger } from "../../sessions/lifecycle.js";
import { sessionModel } from "../../sessions/session-model.js";
import { makeHeader } from "../../sessions/transcript.js";
import type { SessionEntry } from "../../sessions/types.js";
import { automatedSource } from "../authority/authority.js";
import { Interruption } from "../authority/interruption.js";
import { chooseSession, dailyResetOf, restoredProgress } from "../choose-session.js";
import type { DrainMode } from "../drain-resume.js";
import type { WarmSession } from "../session-registry.js";
import { stageAttachments } from "../stage-attachments.js";
import type { WorkItem } from "../work-item.js";
import { applyEffects, applySettlement, notify, outcomeFor } from "./apply-settlement.js";
import { compactNow } from "./compact-now.js";
import { openParked } from "./parked-batch.js";
import type { SessionPorts } from "./ports.js";
import { nextStep, prepareMessage } from "./prepare-message.js";
import { SessionTranscript, saveWarm } from "./session-transcript.js";
import { pathsOf } from "./session-workspace.js";
import { decideSettlement, type Settlement, settlementForError } from "./settlement.js";
import { type SettleTarget, settlementEffects } from "./settlement-effects.js";
import { TurnBookkeeping } from "./turn-bookkeeping.js";
import type { TurnContext } from "./turn-context.js";
import { TurnEvents } from "./turn-events.js";
import { buildTurnInput } from "./turn-input.js";

/** The answer to an approval when nothing in its session waits for one. */
export const NOTHING_PARKED = "Nothing in this session is waiting for an approval.";

interface RunningTurn {
  controller: AbortController;
  turnId: string;
}

/**
 * The consumer of the session queue: runs the work of one session key, one item at a time (the SessionQueue
 * guarantees that), as a fixed sequence of steps: prepare (choose the session, `prepare-message.ts`), store the
 * person's message, run the turn (`turn-input.ts`, `turn-events.ts`) — each returning values; then settle once
 * (`settlement.ts` decides how, `settlement-effects.ts` what that does, `apply-settlement.ts` carries it out) and
 * record (`turn-bookkeeping.ts`). Every accepted journal record ends as replied, failed-told or filtered — except
 * when the gateway stops mid-turn: then it stays open and is finished after the next start. Holds the running
 * turns (`drain`, `abort`).
 */
export class SessionWorker {
  private readonly running = new Map<string, RunningTurn>();
  private readonly bookkeeping: TurnBookkeeping;
  /** Set by `drain`: turns that start from now on are drained from their start. */
  private draining: DrainMode | undefined;
  /**
   * Aborted by `drain`, with its mode: every turn's `TurnInput.drain` (a turn ends at its next safe point,
   * run-turn.ts). One for all turns: a drain is for the whole worker, once; a signal per turn cost every message
   * one more AbortSignal. Every running model call listens on it: no listener limit (Node warns past 10).
   */
  private readonly drainController = new AbortController();

  constructor(private readonly ports: SessionPorts) {
    setMaxListeners(0, this.drainController.signal);
    this.bookkeeping = new TurnBookkeeping(ports);
  }

  /**
   * A stop or restart begins: every running turn (and any that starts from now on) ends at its next safe point,
   * and its person is told `mode` in one line (docs/runtime.md, Stopping and restarting).
   */
  drain(mode: DrainMode): void {
    this.draining ??= mode;
    this.drainController.abort(this.draining);
  }

  /** Aborts the running turn of `key`; false when none runs. */
  abort(key: string, reason: "stop" | "shutdown"): boolean {
    const turn = this.running.get(key);
    if (!turn) return false;
    turn.controller.abort(reason);
    return true;
  }

  abortAll(reason: "stop" | "shutdown"): void {
    for (const turn of this.running.values()) turn.controller.abort(reason);
  }

  outcomeFor(
    item: WorkItem,
    stopReason: TurnOutcome["stopReason"],
    payloads: string[],
    error?: string,
    extra: Partial<TurnOutcome> = {},
  ): TurnOutcome {
    return outcomeFor(this.ports.runtime, item, stopReason, payloads, error, extra);
  }

  /** Answers a command at once (no model), ends its journal record as replied; the outcome names the session. */
  async answer(item: WorkItem, text: string, extra: Partial<TurnOutcome> = {}): Promise<void> {
    const sessionId = extra.sessionId ?? (await this.ports.storage.store.get(item.sessionKey))?.sessionId;
    const named = sessionId ? { ...extra, sessionId } : extra;
    return applySettlement(
      this.ports,
      { kind: "answer", text, extra: named },
      { key: item.sessionKey, item },
    );
  }

  /**
   * The message's journal record could not be made durable after its turn began (`Gateway.receive` told the
   * transport it was not taken, so it comes again). Every way out to the person waits for `taken` and stops
   * there; the item then settles `refused`.
   */
  refuse(item: WorkItem): void {
    item.refused = true;
  }

  /** An unexpected failure (a bug, a disk error): logged, the person is told, the record ends, never thrown. */
  fail(item: WorkItem, error: unknown): Promise<void> {
    return applySettlement(this.ports, settlementForError(error, item, false), {
      key: item.sessionKey,
      item,
    });
  }

  /** The final save of a session before it is unloaded (see `saveWarm`). */
  saveWarm(session: WarmSession): Promise<void> {
    return saveWarm(session);
  }

  /**
   * `/compact` of session `key`, run in its lane like a turn (compact-now.ts); answers `item` with how much it
   * saved, or fails it as an unexpected error would.
   */
  async compactNow(key: string, item: WorkItem): Promise<void> {
    const sessions = this.ports.storage.sessions;
    if (this.ports.queue.isStopping()) return this.answer(item, "Not compacted: the gateway is stopping.");
    sessions?.enter(key, "processing");
    sessions?.enter(key, "compacting");
    try {
      const text = await compactNow(this.ports, key);
      sessions?.enter(key, "processing");
      await this.answer(item, text);
    } catch (error) {
      if (sessions?.phaseOf(key) === "compacting") sessions.enter(key, "processing");
      await this.fail(item, error);
    } finally {
      sessions?.enter(key, "ready");
      sessions?.touch(key);
    }
  }

  /** See TurnBookkeeping.recorded. */
  recorded(key?: string): Promise<void> {
    return this.bookkeeping.recorded(key);
  }

  /** See TurnBookkeeping.recordingsSettled. */
  recordingsSettled(): Promise<void> {
    return this.bookkeeping.recordingsSettled();
  }

  /**
   * The item's way: `prepare` and the model turn decide, and return how the item settles (a `Way`); its
   * settlement is turned into effects (`settlementEffects`, pure) and carried out here, in one place
   * (`applyEffects`). Then the work is over: the turn, if one ran, ends (`turn-end`, after its final message) and
   * the held outcomes resolve. A way that throws, or whose settlement throws, settles as the error says
   * (`settlementForError`) once the work is over.
   */
  async process(key: string, item: WorkItem): Promise<void> {
    const { ports } = this;
    const stopping = ports.queue.isStopping();
    const outcomes = new HeldOutcomes();
    if (!stopping) {
      // The session's phase (phase.ts): processing while its work runs, ready after. The queue touched it in.
      ports.storage.sessions?.enter(key, "processing");
      // Outcomes resolve once the item's work is over (after its turn's `turn-end`): whoever waits for a
      // message's outcome sees the turn over, as every watcher does.
      outcomes.hold(item);
    }
    const ran: { turn?: TurnRan } = {};
    try {
      let way: Way;
      try {
        way = stopping
          ? { settlement: { kind: "not-run" }, at: { key, item } }
          : await this.prepare(key, item, outcomes, ran);
      } catch (error) {
        way = { settlement: settlementForError(error, item), at: { key, item }, failure: true };
      }
      /**
       * The work is over: the turn ends (its bookkeeping written behind, then its one `turn-end`), or, without a
       * turn, the bookkeeping a settlement asks for is written behind; then the held outcomes resolve.
       */
      const over = (recordLater: boolean) => {
        // The store's bookkeeping (usage, the last exchange) is written behind: the reply, the turn's end, its
        // outcome and the lane do not wait for the store's fsync'd rewrite (RECORD_DEFER_MS). The session's next
        // turn decides on the entry with it applied (`getWithUpdates`); `/status`, `Gateway.idle()` and a stop
        // write it at once.
        if (ran.turn || recordLater) this.bookkeeping.recordTurnLater(key, item, ran.turn?.result);
        // Exactly one turn-end per turn-start, however the turn ended, and after its final message.
        ran.turn?.events.end(ran.turn.result);
        outcomes.release();
      };
      for (;;) {
        if (way.failure) over(false);
        const effects = settlementEffects(way.settlement, way.at, ports.queue.waiting?.(key) ?? 0);
        const thrown = await applyEffects(ports, effects, way.at).then(
          () => undefined,
          (error: unknown) => ({ error }),
        );
        if (way.failure) {
          if (thrown) throw thrown.error;
          return;
        }
        if (!thrown) {
          over(way.recordLater === true);
          return;
        }
        way = { settlement: settlementForError(thrown.error, item), at: { key, item }, failure: true };
      }
    } finally {
      if (!stopping) {
        ports.storage.sessions?.enter(key, "ready");
        // The idle time before passivation counts from the end of the work.
        ports.storage.sessions?.touch(key);
      }
    }
  }

  /** Prepare, store the person's message, then settle at once or run the turn: how the item settles. */
  private async prepare(
    key: string,
    item: WorkItem,
    outcomes: HeldOutcomes,
    ran: { turn?: TurnRan },
  ): Promise<Way> {
    const { ports } = this;
    const { clock, config } = ports.runtime;
    const { store } = ports.storage;
    const now = clock.now();
    const reset = matchResetTrigger(item.text, config.inbound.reply.session.resetTriggers);
    const progress = item.restored ? await restoredProgress(store, key, item.jid) : undefined;
    const { sessionId, notice, entry, started } = progress
      ? { sessionId: progress.sessionId, notice: undefined, entry: undefined, started: undefined }
      : await chooseSession(
          {
            store,
            logger: ports.runtime.logger,
            idleMinutes: config.inbound.reply.session.idleMinutes,
            ...dailyResetOf(config),
          },
          key,
          reset.matched,
          now,
        );
    // Watchers (the web chat) replace the old conversation with the new one before anything of it arrives.
    if (started)
      ports.delivery.events.emit({ type: "session", sessionKey: key, sessionId, reason: started, ts: now });
    const ids = { sessionKey: key, sessionId };
    const paths = pathsOf(ports, key, sessionId);
    const transcript = new SessionTranscript(
      ports,
      paths.transcript,
      makeHeader(sessionId, key, new Date(now)),
    );
    const at = { key, item, ids, paths, transcript };
    // An approval's answer resumes the session's parked batch, as the transcript holds it.
    const approval = item.message.internal?.kind === "approval-answer" ? item.message.internal : undefined;
    const parked = approval ? openParked((await transcript.readForResume()).entries) : undefined;
    const prepared = prepareMessage({
      text: item.text,
      replyTo: item.message.replyTo,
      contextOnly: item.contextOnly === true,
      reset,
      progress,
      resumesParked: approval !== undefined,
    });
    const next = nextStep({ progress, ...(approval ? { approval: { parked: parked !== undefined } } : {}) });
    if (prepared.kind === "context") return { settlement: { kind: "context-kept", at: now }, at };
    if (prepared.kind === "answer")
      return { settlement: { kind: "answer", text: prepared.text, extra: ids }, at };

    const files = item.message.attachments?.length
      ? await stageAttachments(item.message.attachments, {
          paths,
          jid: item.jid,
          stagingRoot: ports.runtime.stagingRoot,
        })
      : [];
    // The text stored and shown to the model: the message's lines, then a line per staged attachment.
    const text = [...prepared.lines, ...files].join("\n");
    if (prepared.store) await transcript.storeUserMessage(item, text);
    if (notice) await notify(ports, item, notice);

    if (next.kind === "parked") return { settlement: { kind: "parked", open: next.open }, at };
    // Found in the transcript, maybe not on disk (its journal record may have failed): synced before it is sent.
    if (next.kind === "redeliver") return { settlement: { kind: "reply", text: next.text }, at };
    // A model to be found at the endpoint (its only one) is known once the first check is done. While that check
    // runs, a command (/think, /verbose) may change the entry: the turn then reads it again.
    const modelKnown = ports.model.name() !== undefined;
    await ports.model.ready?.();
    if (next.kind === "nothing-parked")
      return { settlement: { kind: "answer", text: NOTHING_PARKED, extra: ids }, at };
    const llm = ports.model.llm();
    // The session's own model (`/model <name>`) before the configured one.
    const model = sessionModel(entry ?? (await store.getWithUpdates(key)), ports.model.name());
    if (!llm || !model)
      return {
        settlement: { kind: "no-model", text: noModelReply(ports.runtime.configPath()) },
        at,
        recordLater: true,
      };
    const ctx: TurnContext = {
      ...at,
      joined: [],
      attachments: [],
      trace: { entries: [], textStreamed: false, callsStarted: [], unsynced: [] },
      // The parked turn's record, unless a replay ended it already (handed on to this answer).
      ...(parked?.journalId && ports.storage.journal.get(parked.journalId)
        ? { alsoEnd: [parked.journalId] }
        : {}),
    };
    const resume = parked ? { calls: parked.waiting, decisions: approval?.decisions ?? {} } : undefined;
    return this.turn(
      key,
      ctx,
      { llm, model, text, ...(modelKnown && entry ? { entry } : {}), ...(resume ? { resume } : {}) },
      outcomes,
      ran,
    );
  }

  /**
   * Runs the model turn and decides how it settles. `ran.turn` is set once the turn started: its end
   * (`endTurn`) follows the settlement, however the turn ended.
   */
  private async turn(
    key: string,
    ctx: TurnContext,
    run: { llm: LlmClient; model: string; text: string; entry?: SessionEntry; resume?: TurnInput["resume"] },
    outcomes: HeldOutcomes,
    ran: { turn?: TurnRan },
  ): Promise<Way> {
    const { item } = ctx;
    const controller = new AbortController();
    const events = new TurnEvents(this.ports, key, item, randomUUID());
    // An automated turn ends after its batch when a person writes (runtime/authority): its own drain signal.
    const interruption = item.message.automated ? new Interruption(this.drainController.signal) : undefined;
    const { input, entry } = await buildTurnInput(this.ports, ctx, {
      ...run,
      cwd: ctx.paths.workspace,
      signal: controller.signal,
      drain: interruption?.drain ?? this.drainController.signal,
      events,
      hold: (w) => outcomes.hold(w),
      ...(interruption ? { interruptBy: (w: WorkItem) => interruption.by(w) } : {}),
    });
    const started: TurnRan = { events, result: undefined };
    ran.turn = started;
    this.running.set(key, { controller, turnId: events.turnId });
    events.start(entry?.verboseLevel === "on");
    try {
      started.result = await runTurn(input);
    } finally {
      this.running.delete(key);
    }
    const result = started.result;
    events.usage(result);
    const settlement = decideSettlement(result, {
      aborted: controller.signal.aborted,
      abortReason: controller.signal.reason,
      drainMode: this.draining,
      trace: ctx.trace,
      othersWaiting: this.ports.queue.waiting?.(key) ?? 0,
      ...(interruption?.who
        ? { interrupted: { by: interruption.who, source: automatedSource(item.message) } }
        : {}),
    });
    return { settlement, at: ctx };
  }
}

/**
 * How an item's way ends: its settlement and what it applies to. `recordLater`: its store update follows.
 * `failure`: the settlement of a failure, applied once the work is over.
 */
interface Way {
  settlement: Settlement;
  at: SettleTarget;
  recordLater?: true;
  failure?: true;
}

/** A model turn that started: its events, and its result once it returned. */
interface TurnRan {
  events: TurnEvents;
  result: TurnResult | undefined;
}

/**
 * The outcomes of an item and of those that joined its turn, held until its work is over. Once released, an
 * outcome resolves at once: one given after (a failure the turn threw, kept for a retry: the "kept" notice) must
 * still reach whoever waits (an API stream ends with it).
 */
class HeldOutcomes {
  private readonly held: (() => void)[] = [];
  private over = false;

  hold(item: WorkItem): void {
    const resolve = item.resolve;
    item.resolve = (outcome) => {
      if (this.over) resolve(outcome);
      else this.held.push(() => resolve(outcome));
    };
  }

  release(): void {
    this.over = true;
    for (const resolve of this.held.splice(0)) resolve();
  }
}
