// Over 400 lines: `GatewaySubagents` below is the one owner of the runs' life (spawn, run, ask, park, resume, end,
// report) and of what is live; what it decides is pure in run-state.ts, run-resume.ts and run-ending.ts.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { TurnInput, TurnResult } from "../agent/run-turn.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type {
  ApprovalDecision,
  InboundMessage,
  ReceiveResult,
  ToolDefinition,
  ToolResult,
} from "../plugin-api/types.js";
import type { ChildAsk } from "../runtime/approvals/approvals.js";
import type { InternalInput } from "../runtime/internal-input.js";
import { openParked } from "../runtime/session/parked-batch.js";
import { withWorkspace } from "../runtime/session/session-workspace.js";
import type { StoredChatMessage } from "../sessions/types.js";
import { childToolNames } from "./child-tools.js";
import { type ChildTurnSettings, runChildTurn } from "./child-turn.js";
import { type AbortCause, noticeText, runEnding, TRUNCATED_OUTPUT } from "./run-ending.js";
import {
  appendLine,
  createRunFolder,
  type RunRecord,
  readAllRecords,
  readEntries,
  runFolder,
  writeArtifact,
  writeRecord,
  writeResult,
} from "./run-folder.js";
import { spawnRefusal } from "./run-limits.js";
import { messagesOf, requesterMessage, resumePoint } from "./run-resume.js";
import { type EndEvent, holdsParent, isLive, nextRunState, STARTED } from "./run-state.js";
import { spawnTools } from "./spawn-tools.js";

export { CHILD_SYSTEM_PROMPT, type ChildTurnSettings } from "./child-turn.js";
export { MAX_RUNS_PER_SESSION, MAX_RUNS_TOTAL } from "./run-limits.js";

export interface GatewaySubagentsDeps {
  clock: Clock;
  logger: Logger;
  /** The store's folder: every session folder is in it. */
  storeDir: string;
  /** Session `key`'s conversation id, folder and workspace; undefined when it has no entry yet. */
  sessionOf(key: string): Promise<{ sessionId: string; folder: string; workspace: string } | undefined>;
  /** The tools a turn on `message` in session `key` gets (the tools policy), `spawn_agent` and the others among them. */
  parentTools(key: string, message: InboundMessage): ToolDefinition[];
  /** The model and settings now; a string: why no child can run (no model). */
  settings(): ChildTurnSettings | string;
  /** `Gateway.submitInternal`. */
  submit(input: InternalInput): Promise<ReceiveResult>;
  /** A child's batch parked: its prompt is journaled and sent to the parent's chat (`Approvals.askChild`). */
  ask(child: ChildAsk): Promise<void>;
  /** Whether an approval of run `id` waits (`Approvals.childWaits`). */
  asked(id: string): boolean;
  /** Run `id` ended: its approvals that wait no longer do (`Approvals.dropChild`). */
  dropAsks(id: string, why: string): Promise<void>;
}

interface LiveRun {
  record: RunRecord;
  folder: string;
  controller: AbortController;
  cause?: AbortCause;
  ended: Promise<void>;
}

/** The result of a run that cannot go on (`why`) after a restart or after its approval's answer: `owner_restarted`. */
function cannotGoOn(why: string, after: "restart" | "answer"): string {
  const when =
    after === "restart"
      ? "The gateway stopped or restarted while this run was under way and it could not go on afterwards"
      : "This run could not go on after its approval was answered";
  return `${when} (${why}): it ended unfinished, and none of its tool calls runs again. Its log is in logs/.`;
}
/**
 * The gateway's sub-agents (docs/tools.md, Sub-agents): `spawn_agent` starts a child turn (child-turn.ts) beside its
 * parent session's turns, with the parent's tools minus the child's limits (child-tools.ts), the same loop guard,
 * watchdogs and hooks; its messages go to its own folder (run-folder.ts), never to a chat. A call the approvals gate
 * asks about parks the child (`waiting-approval`): the prompt, naming it, goes to the parent's chat, and the answer
 * resumes it from its transcript (`answer`). A stop parks a running child at its next safe point (`parked`); the
 * next start resumes it from its transcript with the same tools and authority (`start`; a kill -9's `running` run
 * too, when its last batch is complete: run-resume.ts); one that cannot park within the drain deadline, or cannot
 * resume, ends `owner_restarted` and no call of it runs again. When a run ends, `result.md` is written and the
 * parent session gets a notice naming it (an automated internal input, `subagent-notice`, in its own turn); a
 * stopping gateway's notices go out at the next start.
 */
export class GatewaySubagents {
  private readonly live = new Map<string, LiveRun>();
  /** The runs this gateway knows that hold their parent (run-state.ts, `holdsParent`), by id, with their folders. */
  private readonly tracked = new Map<string, { record: RunRecord; folder: string }>();
  private readonly drain = new AbortController();
  private halted = false;
  private deadline: ReturnType<Clock["setTimeout"]> | undefined;

  constructor(private readonly deps: GatewaySubagentsDeps) {}

  /** The `spawn_agent` and `check_agent_run` tools of a turn on `message` in session `key`. */
  toolsFor(key: string, message: InboundMessage): ToolDefinition[] {
    return spawnTools({
      spawn: (brief, tools) => this.spawn(key, message, brief, tools),
      check: (id, cancel) => this.check(key, id, cancel),
    });
  }

  /** Whether session `key` has a run that has not ended, or an ended one not reported yet: it stays loaded. */
  holds(key: string): boolean {
    for (const { record } of this.tracked.values()) {
      if (record.sessionKey === key && holdsParent(record.state)) return true;
    }
    return false;
  }

  /**
   * What the last run left: a `parked` run, or a `running` one (a kill -9) whose last batch is complete, resumes
   * from its transcript; any other `running` one ends `owner_restarted`; a `waiting-approval` one waits on (its
   * prompt asked again when the journal has none); ended runs not reported are reported.
   */
  async start(): Promise<void> {
    const found = await readAllRecords(this.deps.storeDir, (path, why) =>
      this.deps.logger.warn(`sub-agent run record ${path} skipped: ${why}`),
    );
    for (const { folder, record } of found) {
      try {
        const { status } = record.state;
        if (status === "running" || status === "parked") await this.restore(folder, record);
        else if (status === "waiting-approval") {
          this.tracked.set(record.id, { record, folder });
          if (!this.deps.asked(record.id)) await this.askAgain(folder, record);
        } else if (!record.state.reported) {
          this.tracked.set(record.id, { record, folder });
        }
        if (!isLive(record.state.status) && !record.state.reported) await this.report(folder, record);
      } catch (error) {
        this.deps.logger.warn(`sub-agent run ${record.id} could not be resumed, ended or reported`, {
          error: String(error),
        });
      }
    }
  }

  /**
   * The gateway drains: every running child stops at its next safe point (`parked`), and one still running
   * `deadlineMs` from now is aborted (`owner_restarted`); no notice goes out any more (they go out after the next
   * start).
   */
  halt(deadlineMs: number): void {
    if (this.halted) return;
    this.halted = true;
    this.drain.abort();
    this.deadline = this.deps.clock.setTimeout(() => {
      for (const run of this.live.values()) {
        run.cause = "restart";
        run.controller.abort();
      }
    }, deadlineMs);
  }

  /** Resolves once every running child has parked or ended (after `halt`, within its deadline). */
  async stop(): Promise<void> {
    try {
      await Promise.all([...this.live.values()].map((r) => r.ended));
    } finally {
      if (this.deadline !== undefined) this.deps.clock.clearTimeout(this.deadline);
    }
  }

  /**
   * The answer to run `id`'s parked batch (`Approvals.decide`): the run is marked `running` in `run.json`, then
   * resumes from its transcript in the background, the batch's calls as `decisions` say. One that cannot go on now
   * (no model, its session gone) ends `owner_restarted` and is reported. Throws when the run does not wait for
   * an answer: nothing changed.
   */
  async answer(id: string, decisions: Record<string, ApprovalDecision>): Promise<void> {
    const run = this.tracked.get(id);
    if (this.halted) throw new Error("the gateway is stopping");
    if (run?.record.state.status !== "waiting-approval")
      throw new Error(`sub-agent run ${id} waits for no approval`);
    const { folder, record } = run;
    const entries = await readEntries(folder);
    const parked = openParked(entries);
    const why =
      parked && parked.waiting.length > 0
        ? await this.launch(folder, record, messagesOf(entries), { calls: parked.waiting, decisions })
        : "its transcript holds no call that waits";
    if (why === undefined) return;
    await this.end(folder, record, "owner_restarted", cannotGoOn(why, "answer"));
    await this.report(folder, record);
  }

  private async spawn(
    key: string,
    message: InboundMessage,
    brief: string,
    requested: string[] | undefined,
  ): Promise<ToolResult> {
    if (this.halted) return { ok: false, output: "spawn_agent: the gateway is stopping" };
    const unended = [...this.tracked.values()].filter((r) => isLive(r.record.state.status));
    const inSession = unended.filter((r) => r.record.sessionKey === key).length;
    const refused = spawnRefusal({ inSession, total: unended.length });
    if (refused) return { ok: false, output: refused };
    const settings = this.deps.settings();
    if (typeof settings === "string") return { ok: false, output: `spawn_agent: ${settings}` };
    const session = await this.deps.sessionOf(key);
    if (!session) return { ok: false, output: "spawn_agent: this session has no folder yet" };
    const parent = this.deps.parentTools(key, message);
    const names = childToolNames(
      parent.map((t) => t.name),
      requested,
    );
    const id = `run-${randomBytes(4).toString("hex")}`;
    const record: RunRecord = {
      version: 1,
      id,
      sessionKey: key,
      sessionId: session.sessionId,
      requester: {
        channel: message.channel,
        senderId: message.senderId,
        authority: message.authority ?? (message.automated ? "automated" : "untrusted"),
      },
      route: { channel: message.channel, chatId: message.chatId, chatType: message.chatType },
      tools: names,
      noticeTools: parent.map((t) => t.name),
      brief,
      startedAt: new Date(this.deps.clock.now()).toISOString(),
      state: STARTED,
    };
    const folder = runFolder(session.folder, id);
    await createRunFolder(folder, record);
    const tools = withWorkspace(
      parent.filter((t) => names.includes(t.name)),
      session.workspace,
    );
    this.go(folder, record, tools, settings, session.workspace, []);
    const left = requested?.filter((n) => !names.includes(n)) ?? [];
    return {
      ok: true,
      output: [
        `Started sub-agent ${id} (tools: ${names.length > 0 ? names.join(", ") : "none"}).`,
        ...(left.length > 0 ? [`Not given (not yours, or never a sub-agent's): ${left.join(", ")}.`] : []),
        `Its result comes back to you as a message when it ends; check_agent_run reads its status. Folder: ${folder}`,
      ].join(" "),
    };
  }

  /**
   * A run found `running` or `parked` at start: resumed from its transcript when it can be (run-resume.ts), else
   * ended `owner_restarted`.
   */
  private async restore(folder: string, record: RunRecord): Promise<void> {
    const point = resumePoint(await readEntries(folder));
    if (point.kind === "answered" && record.state.status === "running") {
      await this.end(folder, record, "finish", point.text);
      return;
    }
    const why =
      point.kind === "resume"
        ? await this.launch(folder, record, point.messages)
        : "its last step was cut short";
    if (why === undefined) {
      this.deps.logger.info(`sub-agent run ${record.id} resumed after the restart`);
      return;
    }
    await this.end(folder, record, "owner_restarted", cannotGoOn(why, "restart"));
  }

  /**
   * Starts run `record` again from `prior` (its transcript's messages) with its tools rebuilt under its requester's
   * authority, `run.json` marked `running` first; undefined when it went, else why it cannot.
   */
  private async launch(
    folder: string,
    record: RunRecord,
    prior: StoredChatMessage[],
    resume?: TurnInput["resume"],
  ): Promise<string | undefined> {
    const settings = this.deps.settings();
    if (typeof settings === "string") return settings;
    const session = await this.deps.sessionOf(record.sessionKey);
    if (!session) return "its session is gone";
    const tools = withWorkspace(
      this.deps
        .parentTools(record.sessionKey, requesterMessage(record))
        .filter((t) => record.tools.includes(t.name)),
      session.workspace,
    );
    if (record.state.status !== "running") {
      record.state = nextRunState(record.state, "resume");
      await writeRecord(folder, record);
    }
    this.go(folder, record, tools, settings, session.workspace, prior, resume);
    return undefined;
  }

  /** Runs the child's turn in the background (`live` until it parks, waits or ends). */
  private go(
    folder: string,
    record: RunRecord,
    tools: ToolDefinition[],
    settings: ChildTurnSettings,
    cwd: string,
    prior: StoredChatMessage[],
    resume?: TurnInput["resume"],
  ): void {
    const run: LiveRun = { record, folder, controller: new AbortController(), ended: Promise.resolve() };
    this.live.set(record.id, run);
    this.tracked.set(record.id, { record, folder });
    run.ended = this.run(run, tools, settings, cwd, prior, resume);
  }

  private log(folder: string, line: string): Promise<void> {
    return appendLine(
      folder,
      join("logs", "run.log"),
      `${new Date(this.deps.clock.now()).toISOString()} ${line}`,
    ).catch(() => undefined);
  }

  private async run(
    run: LiveRun,
    tools: ToolDefinition[],
    settings: ChildTurnSettings,
    cwd: string,
    prior: StoredChatMessage[],
    resume: TurnInput["resume"] | undefined,
  ): Promise<void> {
    const { record, folder } = run;
    const { result, error, reply } = await runChildTurn({
      record,
      folder,
      tools,
      settings,
      cwd,
      prior,
      ...(resume ? { resume } : {}),
      signal: run.controller.signal,
      drain: this.drain.signal,
      clock: this.deps.clock,
      logger: this.deps.logger,
      log: (line) => this.log(folder, line),
    });
    try {
      if (result?.parked && run.cause === undefined) {
        await this.step(folder, record, "ask");
        this.live.delete(record.id);
        await this.askAgain(folder, record);
        return;
      }
      if (result?.drained === true && run.cause === undefined) {
        await this.step(folder, record, "park");
        return;
      }
      const turn = result ?? {
        ...stoppedTurn,
        stopReason: "error" as const,
        drained: false,
        error: String(error),
      };
      const ending = runEnding(turn, run.cause);
      if (turn.stopReason === "output-limit" && run.cause === undefined) {
        await writeArtifact(folder, TRUNCATED_OUTPUT, reply);
      }
      await this.log(folder, `end ${ending.event} (${turn.stopReason})`);
      await this.end(folder, record, ending.event, ending.result);
      this.live.delete(record.id);
      // A stopping gateway takes no new input: the notice goes out after the next start.
      if (!this.halted) await this.report(folder, record);
    } catch (failed) {
      this.deps.logger.warn(`sub-agent run ${record.id} could not be ended and reported`, {
        error: String(failed),
      });
    } finally {
      this.live.delete(record.id);
    }
  }

  /** A step that does not end the run (`ask`, `park`): `run.json` written, a line logged. */
  private async step(folder: string, record: RunRecord, event: "ask" | "park"): Promise<void> {
    record.state = nextRunState(record.state, event);
    await writeRecord(folder, record);
    await this.log(folder, event === "ask" ? "waiting-approval" : "parked (the gateway stops)");
    this.deps.logger.info(`sub-agent run ${record.id}: ${record.state.status}`);
  }

  /** The prompt for the batch that waits in run `record`'s transcript, asked in its parent's chat. */
  private async askAgain(folder: string, record: RunRecord): Promise<void> {
    const parked = openParked(await readEntries(folder));
    if (!parked || parked.waiting.length === 0) {
      await this.end(
        folder,
        record,
        "fail",
        "The run waited for an approval, but its transcript holds no call that waits.",
      );
      if (!this.halted) await this.report(folder, record);
      return;
    }
    await this.deps.ask({
      runId: record.id,
      sessionKey: record.sessionKey,
      requester: record.requester,
      chat: record.route,
      parked,
    });
  }

  /** Writes `result.md`, then the ended state in `run.json`; its approvals no longer wait; it waits to be reported. */
  private async end(folder: string, record: RunRecord, event: EndEvent, text: string) {
    await writeResult(folder, text);
    record.state = nextRunState(record.state, event);
    record.endedAt = new Date(this.deps.clock.now()).toISOString();
    this.tracked.set(record.id, { record, folder });
    await writeRecord(folder, record);
    await this.deps.dropAsks(record.id, `the sub-agent run ended ${record.state.status}`);
    this.deps.logger.info(`sub-agent run ${record.id} ended: ${record.state.status}`);
  }

  /** Hands the parent its notice (journaled, taken once by its id), then marks the run reported. */
  private async report(folder: string, record: RunRecord): Promise<void> {
    const resultPath = join(folder, "result.md");
    const text = await readFile(resultPath, "utf8").catch(() => "(result.md is missing)");
    await this.deps.submit({
      sessionKey: record.sessionKey,
      kind: "subagent-notice",
      text: noticeText(record.id, record.state.status, resultPath, text.trimEnd()),
      authority: "automated",
      route: record.route,
      allowedTools: record.noticeTools,
      id: `subagent-${record.id}`,
    });
    record.state = nextRunState(record.state, "report");
    await writeRecord(folder, record);
    this.tracked.delete(record.id);
  }

  private async check(key: string, id: string, cancel: boolean): Promise<ToolResult> {
    const run = this.live.get(id);
    if (run && run.record.sessionKey === key) {
      if (!cancel) return { ok: true, output: `Sub-agent ${id}: running since ${run.record.startedAt}.` };
      run.cause = "cancel";
      run.controller.abort();
      await run.ended;
      return { ok: true, output: `Sub-agent ${id}: cancelled.` };
    }
    const waiting = this.tracked.get(id);
    if (waiting && waiting.record.sessionKey === key && isLive(waiting.record.state.status)) {
      const { record, folder } = waiting;
      if (!cancel)
        return {
          ok: true,
          output: `Sub-agent ${id}: ${record.state.status} (its call waits for an approval in this chat).`,
        };
      await this.end(folder, record, "cancel", "Cancelled (check_agent_run) before it finished.");
      await this.report(folder, record);
      return { ok: true, output: `Sub-agent ${id}: cancelled.` };
    }
    const session = await this.deps.sessionOf(key);
    const found = session
      ? (await readAllRecords(this.deps.storeDir, () => undefined)).find(
          (r) => r.record.id === id && r.record.sessionKey === key,
        )
      : undefined;
    if (!found) return { ok: false, output: `check_agent_run: no sub-agent run ${id} in this session` };
    const text = await readFile(join(found.folder, "result.md"), "utf8").catch(() => "");
    return {
      ok: true,
      output: `Sub-agent ${id}: ${found.record.state.status}${cancel ? " (it had already ended)" : ""}. Result (${join(found.folder, "result.md")}):\n${text.trimEnd()}`,
    };
  }
}

/** A turn that ended under a stop. */
const stoppedTurn: Pick<TurnResult, "stopReason" | "text" | "quiet" | "error" | "drained"> = {
  stopReason: "aborted",
  text: "",
  drained: true,
};
