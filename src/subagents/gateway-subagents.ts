import { randomBytes } from "node:crypto";
import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { LlmClient } from "../agent/llm-client.js";
import { runTurn, type TurnInput, type TurnResult } from "../agent/run-turn.js";
import type { TurnHooks } from "../agent/turn-hooks.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { InboundMessage, ReceiveResult, ToolDefinition, ToolResult } from "../plugin-api/types.js";
import type { InternalInput } from "../runtime/internal-input.js";
import { withWorkspace } from "../runtime/session/session-workspace.js";
import { childHooks } from "./child-hooks.js";
import { childToolNames } from "./child-tools.js";
import { type AbortCause, noticeText, runEnding, TRUNCATED_OUTPUT } from "./run-ending.js";
import {
  appendLine,
  createRunFolder,
  type RunRecord,
  readAllRecords,
  runFolder,
  writeArtifact,
  writeRecord,
  writeResult,
} from "./run-folder.js";
import { spawnRefusal } from "./run-limits.js";
import { holdsParent, nextRunState, type RunEvent, STARTED } from "./run-state.js";
import { spawnTools } from "./spawn-tools.js";

export { MAX_RUNS_PER_SESSION, MAX_RUNS_TOTAL } from "./run-limits.js";

export const CHILD_SYSTEM_PROMPT =
  "You are a sub-agent of clawdis, the owner's personal assistant. You work alone on the task in the brief: " +
  "nobody reads your messages while you work and you cannot ask questions. Use the tools you have; when you are " +
  "done, answer with your result, complete and plain: it is handed to the assistant that asked.";

/** What a child's turn runs with, read when it starts. */
export interface ChildTurnSettings {
  llm: Pick<LlmClient, "stream">;
  model: string;
  timeouts: TurnInput["timeouts"];
  maxOutputTokens: number;
  /** The parent's hooks for a turn in `cwd` (the approvals gate, any others): childHooks adapts them. */
  hooks: (cwd: string) => TurnHooks[];
}

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
}

interface LiveRun {
  record: RunRecord;
  folder: string;
  controller: AbortController;
  cause?: AbortCause;
  ended: Promise<void>;
}

/**
 * The gateway's sub-agents (docs/tools.md, Sub-agents): `spawn_agent` starts a child turn (`runTurn`) beside its
 * parent session's turns, with the parent's tools minus the child's limits (child-tools.ts), the same loop guard,
 * watchdogs and hooks (a call the approvals gate would ask about is refused: child-hooks.ts); its messages go to its
 * own folder (run-folder.ts), never to a chat. When it ends, `result.md` is written and the parent session gets a
 * notice naming it (an automated internal input, `subagent-notice`, in its own turn). Across a stop the child is
 * drained and ends `owner_restarted` (a kill -9: it is found `running` at the next start and ends so then); its
 * notice goes out at the next start; no call of it runs again.
 */
export class GatewaySubagents {
  private readonly live = new Map<string, LiveRun>();
  /** The runs this gateway knows that hold their parent (run-state.ts, `holdsParent`), by id. */
  private readonly tracked = new Map<string, RunRecord>();
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

  /** Whether session `key` has a live run, or an ended one not reported yet: it stays loaded. */
  holds(key: string): boolean {
    for (const record of this.tracked.values()) {
      if (record.sessionKey === key && holdsParent(record.state)) return true;
    }
    return false;
  }

  /** Runs that ended while the gateway was down (or under a kill -9) end `owner_restarted` and are reported. */
  async start(): Promise<void> {
    const found = await readAllRecords(this.deps.storeDir, (path, why) =>
      this.deps.logger.warn(`sub-agent run record ${path} skipped: ${why}`),
    );
    for (const { folder, record } of found) {
      try {
        if (record.state.status === "running") {
          await this.end(folder, record, "owner_restarted", runEnding(stoppedTurn, "restart").result);
        } else if (!record.state.reported) {
          this.tracked.set(record.id, record);
        }
        if (!record.state.reported) await this.report(folder, record);
      } catch (error) {
        this.deps.logger.warn(`sub-agent run ${record.id} could not be ended and reported`, {
          error: String(error),
        });
      }
    }
  }

  /**
   * The gateway drains: every child ends at its next safe point (`owner_restarted`), and one still running
   * `deadlineMs` from now is aborted; no notice goes out any more (they go out after the next start).
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

  /** Resolves once every child has ended (after `halt`, within its deadline). */
  async stop(): Promise<void> {
    try {
      await Promise.all([...this.live.values()].map((r) => r.ended));
    } finally {
      if (this.deadline !== undefined) this.deps.clock.clearTimeout(this.deadline);
    }
  }

  private async spawn(
    key: string,
    message: InboundMessage,
    brief: string,
    requested: string[] | undefined,
  ): Promise<ToolResult> {
    if (this.halted) return { ok: false, output: "spawn_agent: the gateway is stopping" };
    const inSession = [...this.live.values()].filter((r) => r.record.sessionKey === key).length;
    const refused = spawnRefusal({ inSession, total: this.live.size });
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
    const controller = new AbortController();
    const run: LiveRun = { record, folder, controller, ended: Promise.resolve() };
    this.live.set(id, run);
    this.tracked.set(id, record);
    run.ended = this.run(run, tools, settings, session.workspace);
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

  private async run(
    run: LiveRun,
    tools: ToolDefinition[],
    settings: ChildTurnSettings,
    cwd: string,
  ): Promise<void> {
    const { record, folder } = run;
    const log = (line: string) =>
      appendLine(
        folder,
        join("logs", "run.log"),
        `${new Date(this.deps.clock.now()).toISOString()} ${line}`,
      ).catch(() => undefined);
    let reply = "";
    let result: TurnResult | undefined;
    let error: unknown;
    try {
      result = await runTurn({
        turnId: `subagent:${record.id}`,
        sessionKey: record.sessionKey,
        model: settings.model,
        messages: [
          { role: "system", content: CHILD_SYSTEM_PROMPT },
          { role: "user", content: record.brief },
        ],
        tools,
        llm: settings.llm,
        append: async (entries) => {
          await appendFile(
            join(folder, "transcript.jsonl"),
            entries.map((e) => `${JSON.stringify(e)}\n`).join(""),
            { mode: 0o600 },
          );
        },
        emit: (event) => {
          if (event.type === "delta") reply += event.text;
          if (event.type === "tool-call") {
            reply = "";
            void log(`tool-call ${event.name} ${event.callId}`);
          }
          if (event.type === "tool-result")
            void log(`tool-result ${event.name} ${event.callId} ok=${event.ok}`);
        },
        takeJoined: async () => [],
        signal: run.controller.signal,
        drain: this.drain.signal,
        clock: this.deps.clock,
        timeouts: settings.timeouts,
        maxOutputTokens: settings.maxOutputTokens,
        cwd,
        log: this.deps.logger,
        hooks: childHooks(settings.hooks(cwd)),
      });
    } catch (thrown) {
      error = thrown;
    }
    try {
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
      await log(`end ${ending.event} (${turn.stopReason})`);
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

  /** Writes `result.md`, then the ended state in `run.json`; the run waits to be reported. */
  private async end(folder: string, record: RunRecord, event: Exclude<RunEvent, "report">, text: string) {
    await writeResult(folder, text);
    record.state = nextRunState(record.state, event);
    record.endedAt = new Date(this.deps.clock.now()).toISOString();
    this.tracked.set(record.id, record);
    await writeRecord(folder, record);
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

/** A turn that ended under a stop: what a run found `running` at start is taken to be. */
const stoppedTurn: Pick<TurnResult, "stopReason" | "text" | "quiet" | "error" | "drained"> = {
  stopReason: "aborted",
  text: "",
  drained: true,
};
