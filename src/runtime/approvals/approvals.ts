// Over 400 lines: the asks and answers of both kinds (`Approvals` below) share one order per session and one
// journal; what is decided is pure in approval-answer.ts and approval-gate.ts.
import { randomUUID } from "node:crypto";
import type { TurnHooks } from "../../agent/turn-hooks.js";
import type { Clock } from "../../core/clock.js";
import type { Logger } from "../../core/logger.js";
import type {
  ApprovalDecision,
  GatewayEvent,
  OutboundButton,
  ReceiveResult,
  TurnOutcome,
} from "../../plugin-api/types.js";
import { authorityOf } from "../../routing/inbound-pipeline/admission-steps.js";
import type { Step } from "../../routing/inbound-pipeline/types.js";
import type { ApprovalAsk, ApprovalDecisionKind } from "../../sessions/approval-record.js";
import type { Journal } from "../../sessions/journal.js";
import { type PromptChat, promptChat } from "../authority/approval-chat.js";
import type { InternalInput } from "../internal-input.js";
import type { ParkedBatch } from "../session/parked-batch.js";
import type { WorkItem } from "../work-item.js";
import {
  type AnswerSender,
  type ApprovalAnswer,
  askFor,
  decidedText,
  parseApprovalAnswer,
  promptButtons,
  promptText,
  routeMessage,
  WROTE_INSTEAD,
  wroteInsteadNote,
} from "./approval-answer.js";
import { approvalGate } from "./approval-gate.js";
import type { ApprovalsSetting } from "./approval-policy.js";
import type { ApprovalsFile } from "./approvals-file.js";
import { matchesEntry } from "./bash-allowlist.js";

/** What the approvals act through; the gateway passes these. */
export interface ApprovalsDeps {
  journal: Journal;
  logger: Logger;
  clock: Clock;
  file: ApprovalsFile;
  setting(): ApprovalsSetting | undefined;
  /** The batch parked in session `key`'s transcript, if one waits. */
  parked(key: string): Promise<ParkedBatch | undefined>;
  /**
   * Sends `text` to a chat (through the outbox for a transport's chat, with `buttons`, or settling the chat's last
   * buttons: `closesButtons`) and publishes it as a notice.
   */
  tell(
    chat: ApprovalAsk["chat"],
    sessionKey: string,
    text: string,
    options?: { buttons?: OutboundButton[]; closesButtons?: boolean },
  ): Promise<void>;
  /**
   * Ends an item as answered by a note that went to its chat already: its outcome carries `text`, followed by
   * what `then` (the resumed turn's outcome) resolves to when given (a local client waits for the reply).
   */
  answered(item: WorkItem, text: string, then?: Promise<TurnOutcome>): Promise<void>;
  /** Hands the session the answer (`Gateway.submitInternal`), then queues `follow` right behind it, in order. */
  resume(input: InternalInput, follow: WorkItem[]): Promise<ReceiveResult>;
  /** Answers an item now (a reply, its record ended). */
  answer(item: WorkItem, text: string): Promise<void>;
  /** Ends an item without a reply (an answer from someone who may not give it). */
  ignore(item: WorkItem, why: string): Promise<void>;
  /** Queues an item that was held. */
  enqueue(item: WorkItem): void;
  /** The chat the owner last wrote from in session `key` (an automated turn's prompt goes there). */
  ownerChat?(key: string): Promise<PromptChat | undefined>;
  /**
   * Hands sub-agent run `runId` the answer to its parked batch (it resumes in the background); throws when the run
   * does not wait for one (the approval then still waits).
   */
  resumeChild?(runId: string, decisions: Record<string, ApprovalDecision>): Promise<void>;
}

/** What a sub-agent's parked batch asks about: the run, its parent session, whose spawn it was, the call. */
export interface ChildAsk {
  runId: string;
  sessionKey: string;
  requester: ApprovalAsk["requester"];
  /** The chat the spawn came from. */
  chat: ApprovalAsk["chat"];
  parked: ParkedBatch;
}

/**
 * Approvals in chat (docs/tools.md, Approvals): the gate every turn runs (`gate`), the prompt once a turn parked
 * (`onEvent`: a `turn-end` that `parked`), the dispatch step that takes the answers (`step`), and what waits
 * (`pending`, for `/status`). The journal holds each request and each decision as records of their own, so what
 * waits survives a restart or a kill. A decision is taken once: marked at once in memory, then the answer that
 * resumes the batch is accepted (the parked batch runs at most once: parked-batch.ts), then `approval-decided`
 * is written (a kill between the two: the answer's record replays the batch once, and the first turn of the session
 * that ends without parking closes the approval still listed, `closeResumed`).
 * While an approval waits in a session, input that is neither its answer nor from its person is held, in order,
 * and queued right behind the answer: nothing else closes the parked batch. A sub-agent's parked batch asks in its
 * parent's chat (`askChild`); its answer resumes the child (`resumeChild`), and it never holds the parent's input.
 */
export class Approvals {
  /** Approvals decided in this run whose `approval-decided` record may not be on disk yet. */
  private readonly decided = new Set<string>();
  /** Held input per session, in order. */
  private readonly held = new Map<string, WorkItem[]>();
  /** `closeResumed` checks under way. */
  private readonly closing = new Set<Promise<void>>();
  /** Prompts being written, by session: one ask per parked call. */
  private readonly asking = new Map<string, Promise<void>>();

  constructor(private readonly deps: ApprovalsDeps) {}

  /** The gate of a turn working in `cwd`. */
  gate(cwd: string): TurnHooks {
    return approvalGate({
      setting: () => this.deps.setting(),
      allowlist: () => this.deps.file.bash(),
      cwd,
    });
  }

  /**
   * After a turn of `key` that did not park: an approval of the session still listed whose call is no longer in an
   * open parked batch was answered, and its batch resumed, before a kill cut its `approval-decided` record short
   * (the answer's journal record replays the batch once). Its record is written now, so that it is listed no more.
   * Never throws.
   */
  private async closeResumed(key: string): Promise<void> {
    const listed = this.pending(key).filter((a) => a.subagent === undefined);
    if (listed.length === 0) return;
    try {
      const open = await this.deps.parked(key);
      for (const ask of listed) {
        if (this.decided.has(ask.id) || open?.waiting.some((call) => call.id === ask.callId)) continue;
        this.decided.add(ask.id);
        this.deps.logger.info("approval closed: its batch was resumed before a restart", {
          session: key,
          approval: ask.id,
        });
        await this.deps.journal.approvalDecided(
          ask.id,
          "already-resumed",
          "the gateway",
          this.deps.clock.now(),
        );
        this.decided.delete(ask.id);
      }
    } catch (error) {
      this.deps.logger.warn("could not check the approvals of a session", {
        session: key,
        error: String(error),
      });
    }
  }

  /** The approvals that wait, oldest first (all sessions, or `key`'s). */
  pending(key?: string): ApprovalAsk[] {
    return this.deps.journal
      .pendingApprovals()
      .filter((a) => !this.decided.has(a.id) && (key === undefined || a.sessionKey === key));
  }

  /**
   * A sub-agent's batch parked (docs/tools.md, Sub-agents): the prompt, naming the child, is journaled, then sent
   * to the parent's chat (an automated requester's to the owner's chat). Once per call. Never throws.
   */
  askChild(child: ChildAsk): Promise<void> {
    const key = child.sessionKey;
    const before = this.asking.get(key) ?? Promise.resolve();
    const next = before
      .then(() => this.askForChild(child))
      .catch((error: unknown) =>
        this.deps.logger.error("could not ask for a sub-agent's approval", {
          session: key,
          run: child.runId,
          error: String(error),
        }),
      );
    this.asking.set(key, next);
    void next.finally(() => {
      if (this.asking.get(key) === next) this.asking.delete(key);
    });
    return next;
  }

  /** Whether an approval of sub-agent run `runId` waits. */
  childWaits(runId: string): boolean {
    return this.pending().some((a) => a.subagent === runId);
  }

  /** Sub-agent run `runId` ended (or could not go on): its approvals that wait no longer do. */
  async dropChild(runId: string, why: string): Promise<void> {
    for (const ask of this.pending().filter((a) => a.subagent === runId)) {
      this.decided.add(ask.id);
      await this.deps.journal.approvalDecided(ask.id, "deny", "gateway", this.deps.clock.now(), why);
      this.decided.delete(ask.id);
    }
  }

  private async askForChild(child: ChildAsk): Promise<void> {
    const call = child.parked.waiting[0];
    if (!call || this.pending(child.sessionKey).some((a) => a.callId === call.id)) return;
    const to = promptChat(
      child.chat,
      child.requester.authority,
      await this.deps.ownerChat?.(child.sessionKey),
    );
    const ask: ApprovalAsk = {
      id: randomUUID(),
      at: this.deps.clock.now(),
      sessionKey: child.sessionKey,
      jid: `subagent:${child.runId}`,
      callId: call.id,
      waiting: child.parked.waiting.map((c) => c.id),
      tool: call.function.name,
      what: `sub-agent ${child.runId}'s ${child.parked.reason}`,
      ...(call.function.name === "bash" ? commandOf(call.function.arguments) : {}),
      chat: child.chat,
      ...(to !== child.chat ? { promptTo: to } : {}),
      requester: child.requester,
      subagent: child.runId,
    };
    await this.deps.journal.approvalAsked(ask);
    this.deps.logger.info("approval asked", {
      session: child.sessionKey,
      run: child.runId,
      tool: ask.tool,
      approval: ask.id,
    });
    await this.deps.tell(ask.promptTo ?? ask.chat, child.sessionKey, promptText(ask), {
      buttons: promptButtons(ask),
    });
  }

  /** A turn parked: the prompt is journaled, then sent to the chat the turn came from. Never throws. */
  onEvent(event: GatewayEvent): void {
    // Most turns end with no approval listed at all: nothing to check, no async work made for them.
    if (
      event.type === "turn-end" &&
      event.parked !== true &&
      this.deps.journal.pendingApprovals().length > 0
    ) {
      const closing = this.closeResumed(event.sessionKey);
      this.closing.add(closing);
      void closing.finally(() => this.closing.delete(closing));
    }
    if (event.type !== "turn-end" || event.parked !== true) return;
    const key = event.sessionKey;
    const before = this.asking.get(key) ?? Promise.resolve();
    const next = before
      .then(() => this.ask(key))
      .catch((error: unknown) =>
        this.deps.logger.error("could not ask for an approval", { session: key, error: String(error) }),
      );
    this.asking.set(key, next);
    void next.finally(() => {
      if (this.asking.get(key) === next) this.asking.delete(key);
    });
  }

  /** Resolves once the prompts of the turns parked so far are written and sent. */
  async settled(): Promise<void> {
    await Promise.all([...this.asking.values(), ...this.closing]);
  }

  private async ask(key: string): Promise<void> {
    const parked = await this.deps.parked(key);
    const call = parked?.waiting[0];
    if (!parked || !call || !parked.journalId) return;
    if (this.pending(key).some((a) => a.callId === call.id && a.subagent === undefined)) return;
    const record = this.deps.journal.get(parked.journalId);
    if (!record) {
      this.deps.logger.warn("a parked turn's record is no longer open: no prompt", { session: key });
      return;
    }
    const m = record.message;
    const authority = m.authority ?? authorityOf(m, record.local === true);
    const chat = { channel: m.channel, chatId: m.chatId, chatType: m.chatType };
    const to = promptChat(chat, authority, await this.deps.ownerChat?.(key));
    const ask: ApprovalAsk = {
      id: randomUUID(),
      at: this.deps.clock.now(),
      sessionKey: key,
      jid: parked.journalId,
      callId: call.id,
      waiting: parked.waiting.map((c) => c.id),
      tool: call.function.name,
      what: parked.reason,
      ...(call.function.name === "bash" ? commandOf(call.function.arguments) : {}),
      chat,
      ...(to !== chat ? { promptTo: to } : {}),
      requester: { channel: m.channel, senderId: m.senderId, authority },
    };
    await this.deps.journal.approvalAsked(ask);
    this.deps.logger.info("approval asked", { session: key, tool: ask.tool, approval: ask.id });
    await this.deps.tell(ask.promptTo ?? ask.chat, key, promptText(ask), { buttons: promptButtons(ask) });
  }

  /**
   * The dispatch step (after the commands, before the queue): answers, holds or passes each message as
   * `routeMessage` decides.
   */
  step(): Step {
    return async (ctx, next) => {
      const item = ctx.item;
      if (!item) throw new Error("the approvals step runs after the journal step");
      if (!(await this.route(item, ctx.local))) await next();
    };
  }

  /**
   * What `routeMessage` decides for `item`, carried out; false when it goes on to the queue (`pass`). An item
   * kept only as context (a group message that did not address the agent) is never a new message of its
   * person's: it is an answer, or it waits.
   */
  private async route(item: WorkItem, local: boolean): Promise<boolean> {
    const m = item.message;
    const answer = m.internal ? undefined : parseApprovalAnswer(item.text);
    // No approval waits anywhere and this is no answer: it passes (`routeMessage` without an ask), as nearly
    // every message does, without its sender worked out.
    if (answer === undefined && this.deps.journal.pendingApprovals().length === 0) return false;
    const sender: AnswerSender = {
      channel: m.channel,
      senderId: m.senderId,
      authority: m.authority ?? authorityOf(m, local),
      ...(m.internal
        ? { internal: m.internal.kind === "approval-answer" ? "approval-answer" : "other" }
        : {}),
    };
    let pending = this.pending(item.sessionKey);
    // The owner answering, in their own chat, an automated turn of another session that asked there (`promptTo`).
    if (pending.length === 0 && answer && sender.authority === "owner") {
      pending = this.pending().filter(
        (a) =>
          a.promptTo?.channel === m.channel && a.promptTo.chatId === m.chatId && a.subagent === undefined,
      );
    }
    const ask = askFor(pending, sender, answer);
    let route = routeMessage(ask, sender, answer);
    if (item.contextOnly) {
      if (route === "pass" || route === "nothing-waits") return false;
      if (route === "wrote-instead") route = "hold";
      else if (route !== "hold") item.contextOnly = false;
    }
    switch (route) {
      case "pass":
        return false;
      case "nothing-waits":
        await this.deps.answer(item, "Nothing in this session is waiting for an approval.");
        return true;
      case "hold":
        this.deps.logger.info("message held until the approval that waits is answered", {
          session: item.sessionKey,
          journalId: item.jid,
        });
        this.held.set(item.sessionKey, [...(this.held.get(item.sessionKey) ?? []), item]);
        return true;
      case "ignore":
        this.deps.logger.info("an approval answer from someone who may not give it: ignored", {
          session: item.sessionKey,
          sender: `${m.channel}:${m.senderId}`,
        });
        await this.deps.ignore(item, "an approval answer from someone who may not give it");
        return true;
      case "decide": {
        const mismatch = patternMismatch(need(ask), need(answer));
        if (mismatch) await this.deps.answer(item, mismatch);
        else await this.decide(need(ask), need(answer), `${m.channel}:${m.senderId}`, item);
        return true;
      }
      case "wrote-instead":
        await this.decide(
          need(ask),
          { kind: "deny", reason: WROTE_INSTEAD },
          `${m.channel}:${m.senderId}`,
          item,
          true,
        );
        return true;
    }
  }

  /**
   * A group message kept only as context (the mention gate's): false when nothing waits in its session (it is
   * kept as context as usual); else an answer is taken as if addressed and anything else waits for the answer.
   */
  async unaddressed(item: WorkItem, local: boolean): Promise<boolean> {
    return this.route(item, local);
  }

  /**
   * Restart: whether a record left open is held because an approval waits in its session (it came after the
   * parked one: not the parked turn's own record, nor the answer that resumes it). Held items are queued right
   * behind the answer.
   */
  holdReplayed(item: WorkItem): boolean {
    const ask = this.ownPending(item.sessionKey);
    if (!ask || item.jid === ask.jid || item.message.internal?.kind === "approval-answer") return false;
    this.held.set(item.sessionKey, [...(this.held.get(item.sessionKey) ?? []), item]);
    return true;
  }

  /** The oldest approval of session `key`'s own turns that waits (not a sub-agent's). */
  private ownPending(key: string): ApprovalAsk | undefined {
    return this.pending(key).find((a) => a.subagent === undefined);
  }

  /**
   * Carries out a decision: the allowlist entry (`/approve always` on bash), the answer that resumes the batch
   * (the asked call runs, or every waiting call is refused with the reason), with the message that wrote instead
   * (`joins`) and the held input queued right behind it, then the `approval-decided` record.
   */
  private async decide(
    ask: ApprovalAsk,
    answer: ApprovalAnswer,
    by: string,
    item: WorkItem,
    joins = false,
  ): Promise<void> {
    this.decided.add(ask.id);
    let added: string | undefined;
    if (answer.kind === "approve-always" && ask.tool === "bash") {
      added = answer.pattern ?? ask.command;
      if (added !== undefined) await this.deps.file.add(added);
    }
    const decisions: Record<string, ApprovalDecision> =
      answer.kind === "deny"
        ? Object.fromEntries(
            ask.waiting.map((id) => [id, { run: false, reason: answer.reason ?? `denied by ${by}` }]),
          )
        : { [ask.callId]: { run: true } };
    const kind: ApprovalDecisionKind = joins ? "wrote-instead" : answer.kind;
    this.deps.logger.info("approval decided", {
      session: ask.sessionKey,
      approval: ask.id,
      decision: kind,
      by,
    });
    // What waits behind the session's own approval stays held while a sub-agent's is decided.
    const held = ask.subagent === undefined ? (this.held.get(ask.sessionKey) ?? []) : [];
    if (ask.subagent === undefined) this.held.delete(ask.sessionKey);
    // The note goes to the prompt's chat and takes its buttons away; an answer from another chat (a shared session)
    // is answered there too.
    const who = item.message.senderName ?? by;
    const note = joins ? wroteInsteadNote(ask.requester.authority, who) : decidedText(ask, answer, added);
    const prompted = ask.promptTo ?? ask.chat;
    await this.deps.tell(prompted, ask.sessionKey, note, { closesButtons: true });
    const m = item.message;
    const sameChat = m.channel === prompted.channel && m.chatId === prompted.chatId;
    // A local client (the terminal chat, `clawdis agent`) has no chat the reply could reach later: its answer waits
    // for the resumed turn and carries its reply after the note.
    const deferred = !joins && sameChat && item.local && ask.subagent === undefined;
    if (!joins && !deferred) await (sameChat ? this.deps.answered(item, note) : this.deps.answer(item, note));
    const tools =
      ask.requester.authority === "automated"
        ? this.deps.journal.get(ask.jid)?.message.allowedTools
        : undefined;
    let resumed: ReceiveResult | undefined;
    try {
      if (ask.subagent !== undefined) {
        // The child resumes from its own transcript; the parent session is not touched.
        if (!this.deps.resumeChild) throw new Error("no sub-agents to resume");
        await this.deps.resumeChild(ask.subagent, decisions);
      } else
        resumed = await this.deps.resume(
          {
            sessionKey: ask.sessionKey,
            kind: "approval-answer",
            text: answer.kind === "deny" ? `denied: ${answer.reason ?? ""}`.trim() : `approved by ${by}`,
            authority: ask.requester.authority,
            route: ask.chat,
            decisions,
            senderId: ask.requester.senderId,
            // An automated turn resumes with the tools it started with (its source's grant), as every turn keeps them.
            ...(tools ? { allowedTools: tools } : {}),
          },
          [...(joins ? [item] : []), ...held],
        );
    } catch (error) {
      // The answer was not taken: the approval still waits, and what was held is queued as it is.
      this.decided.delete(ask.id);
      this.deps.logger.error("could not hand the session its approval's answer", { error: String(error) });
      for (const w of [...(joins ? [item] : []), ...held]) this.deps.enqueue(w);
      if (deferred) await this.deps.answered(item, note);
      return;
    }
    if (deferred)
      await this.deps.answered(item, note, resumed?.status === "accepted" ? resumed.done : undefined);
    await this.deps.journal.approvalDecided(
      ask.id,
      kind,
      by,
      this.deps.clock.now(),
      answer.kind === "deny" ? answer.reason : undefined,
    );
    // The journal no longer lists it.
    this.decided.delete(ask.id);
  }
}

/**
 * Why `/approve always <pattern>` is not taken (nothing is decided): the pattern does not match the command that
 * waits (a typo would allow something else and still ask for this one). Pure.
 */
export function patternMismatch(
  ask: Pick<ApprovalAsk, "tool" | "command">,
  answer: ApprovalAnswer,
): string | undefined {
  if (answer.kind !== "approve-always" || answer.pattern === undefined || ask.tool !== "bash")
    return undefined;
  if (ask.command !== undefined && matchesEntry(answer.pattern, ask.command)) return undefined;
  return `"${answer.pattern}" does not match the command that waits, so nothing is decided yet. Answer /approve, /approve always, /approve always <a prefix of it>* or /deny [reason].`;
}

function need<T>(value: T | undefined): T {
  if (value === undefined) throw new Error("routeMessage decided without what it needs");
  return value;
}

/** `{ command }` of a bash call's arguments, or nothing. */
function commandOf(args: string): { command?: string } {
  try {
    const value: unknown = JSON.parse(args);
    const command = (value as { command?: unknown } | null)?.command;
    return typeof command === "string" ? { command } : {};
  } catch {
    return {};
  }
}
