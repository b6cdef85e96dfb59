import type { StatusAudience } from "../../runtime/status-report.js";
import type { WorkItem } from "../../runtime/work-item.js";
import { freshEntry } from "../../sessions/lifecycle.js";
import { newSessionId } from "../../sessions/session-id.js";
import { MODEL_OVERRIDE_FIELD, sessionModel } from "../../sessions/session-model.js";
import type { SessionEntry, ThinkingLevel, VerboseLevel } from "../../sessions/types.js";
import { type ChatCommand, directiveState, directiveUsage, parseChatCommand } from "../chat-command.js";
import type { Step } from "./types.js";

/**
 * The command step of dispatch (after the mention gate, before the queue): `/status`, `/stop`, `/think`,
 * `/verbose` are answered at once, without waiting behind a running turn. What a command does is decided by the
 * pure functions below (table-tested); `handleCommand` carries it out through `CommandPorts`.
 */

/** What the command step acts through; the gateway passes these functions. */
export interface CommandPorts {
  /** Answers the item now (its outcome, and for a transport's message a reply). */
  answer(item: WorkItem, text: string): Promise<void>;
  /** The `/status` text of session `key` as `audience` may see it. */
  status(key: string, audience: StatusAudience): Promise<string>;
  /** Aborts the turn running in session `key` (a `/stop`); false when none runs. */
  abortTurn(key: string): boolean;
  /** The stored entry of session `key`. */
  entry(key: string): Promise<SessionEntry | undefined>;
  /** Changes the stored entry of session `key` (`SessionStore.update`); resolves once it is applied. */
  updateEntry(
    key: string,
    change: (entry: SessionEntry | undefined, unusable?: Readonly<Record<string, unknown>>) => SessionEntry,
  ): Promise<unknown>;
  now(): number;
  /** The endpoint's models (`GET /models`, within a bounded time). */
  listModels(): Promise<{ ok: true; models: string[] } | { ok: false; error: string }>;
  /** The configured model (`inbound.reply.agent.model`, or the endpoint's only one), undefined when none. */
  configuredModel(): string | undefined;
  /** Queues a `/compact` of the item's session: it runs in the session's turn order and answers the item. */
  compact(item: WorkItem): void;
}

/** What a command comes to, before anything is done. */
export type CommandPlan =
  /** Not a command: the item goes on to the queue. */
  | { kind: "pass" }
  | { kind: "status" }
  | { kind: "stop"; bare: boolean }
  | { kind: "show-directive"; directive: "think" | "verbose" }
  | { kind: "answer"; text: string }
  /** Saves the session's model (`undefined`: back to the configured one), then answers. */
  | { kind: "set-model"; model: string | undefined }
  | { kind: "list-models" }
  | { kind: "compact" }
  /** Saves the level; then answers `confirm`, or (with text after the directive) hands `rest` on to the queue. */
  | { kind: "set-level"; setting: LevelSetting; confirm: string; rest: string };

export type LevelSetting =
  | { field: "thinkingLevel"; level: ThinkingLevel }
  | { field: "verboseLevel"; level: VerboseLevel };

/** The plan for `command`. Pure. */
export function planCommand(command: ChatCommand): CommandPlan {
  switch (command.kind) {
    case "none":
      return { kind: "pass" };
    case "status":
      return { kind: "status" };
    case "stop":
      return { kind: "stop", bare: command.bare };
    case "model":
      if (command.name === undefined) return { kind: "list-models" };
      return {
        kind: "set-model",
        model: command.name.toLowerCase() === "default" ? undefined : command.name,
      };
    case "compact":
      return { kind: "compact" };
    case "show-directive":
      return { kind: "show-directive", directive: command.directive };
    case "invalid-directive":
      return { kind: "answer", text: directiveUsage(command.directive) };
    case "think":
      return {
        kind: "set-level",
        setting: { field: "thinkingLevel", level: command.level },
        confirm: `Thinking level set to ${command.level}.`,
        rest: command.rest,
      };
    case "verbose":
      return {
        kind: "set-level",
        setting: { field: "verboseLevel", level: command.level },
        confirm: `Verbose set to ${command.level}.`,
        rest: command.rest,
      };
  }
}

/**
 * The answer to a stop, given whether a turn was running: a bare `stop` with nothing running is no command
 * (undefined: the item goes on to the queue as text). Pure.
 */
export function stopAnswer(stopped: boolean, bare: boolean): string | undefined {
  if (stopped) return "Stopped.";
  return bare ? undefined : "Nothing to stop: no turn is running.";
}

/**
 * The entry with `setting` saved. A missing entry starts a session; a refused one (`unusable`: a bad sessionId)
 * keeps its other fields under a new id. Pure but for the new id it may draw.
 */
export function withLevel(
  entry: SessionEntry | undefined,
  unusable: Readonly<Record<string, unknown>> | undefined,
  setting: LevelSetting,
  now: number,
): SessionEntry {
  const base: SessionEntry = entry ?? freshEntry(unusable, newSessionId(), now);
  return { ...base, [setting.field]: setting.level, updatedAt: now };
}

/** The entry with the session's model set (`undefined`: removed), as `withLevel` does for a level. Pure but for the new id. */
export function withModel(
  entry: SessionEntry | undefined,
  unusable: Readonly<Record<string, unknown>> | undefined,
  model: string | undefined,
  now: number,
): SessionEntry {
  const next: SessionEntry = { ...(entry ?? freshEntry(unusable, newSessionId(), now)), updatedAt: now };
  if (model === undefined) delete next[MODEL_OVERRIDE_FIELD];
  else next[MODEL_OVERRIDE_FIELD] = model;
  return next;
}

/** The answer to `/model <name>` or `/model default`. Pure. */
export function modelSetAnswer(model: string | undefined, configured: string | undefined): string {
  if (model !== undefined)
    return `Model set to ${model} for this session. /model default goes back to the configured one.`;
  return `Model set back to the configured one${configured ? ` (${configured})` : ""}.`;
}

/** The answer to `/model` alone: the endpoint's models, the one in use marked. Pure. */
export function modelListAnswer(
  listed: { ok: true; models: string[] } | { ok: false; error: string },
  inUse: string | undefined,
): string {
  const using = inUse ? `This session uses ${inUse}.` : "No model is set.";
  if (!listed.ok) return `${using} The endpoint's models could not be listed: ${listed.error}`;
  if (listed.models.length === 0) return `${using} The endpoint lists no models.`;
  const names = listed.models.map((m) => (m === inUse ? `${m} (in use)` : m));
  return `${using} The endpoint offers: ${names.join(", ")}. Change it with /model <name>.`;
}

/**
 * Carries out `command` for `item`. Returns true when it was answered; false when the item goes on to the queue
 * (not a command, a bare `stop` with nothing running, a directive followed by text: then `item.text` is that
 * text).
 */
export async function handleCommand(
  item: WorkItem,
  command: ChatCommand,
  ports: CommandPorts,
): Promise<boolean> {
  const key = item.sessionKey;
  const plan = planCommand(command);
  switch (plan.kind) {
    case "pass":
      return false;
    case "status":
      await ports.answer(
        item,
        await ports.status(key, item.message.chatType === "group" ? "group" : "direct"),
      );
      return true;
    case "stop": {
      const answer = stopAnswer(ports.abortTurn(key), plan.bare);
      if (answer === undefined) return false;
      await ports.answer(item, answer);
      return true;
    }
    case "show-directive":
      await ports.answer(item, directiveState(plan.directive, await ports.entry(key)));
      return true;
    case "answer":
      await ports.answer(item, plan.text);
      return true;
    case "set-model":
      await ports.updateEntry(key, (entry, unusable) => withModel(entry, unusable, plan.model, ports.now()));
      await ports.answer(item, modelSetAnswer(plan.model, ports.configuredModel()));
      return true;
    case "list-models": {
      const inUse = sessionModel(await ports.entry(key), ports.configuredModel());
      await ports.answer(item, modelListAnswer(await ports.listModels(), inUse));
      return true;
    }
    case "compact":
      ports.compact(item);
      return true;
    case "set-level": {
      await ports.updateEntry(key, (entry, unusable) =>
        withLevel(entry, unusable, plan.setting, ports.now()),
      );
      if (plan.rest.trim().length === 0) {
        await ports.answer(item, plan.confirm);
        return true;
      }
      item.text = plan.rest;
      return false;
    }
  }
}

/** The step: parses the item's text (`ctx.command`), answers a command at once, or goes on to the queue. */
export function commandStep(ports: CommandPorts): Step {
  return async (ctx, next) => {
    const item = ctx.item;
    if (!item) throw new Error("commandStep runs after the journal step");
    // Internal input is never a chat command: the core hands it in for the model.
    if (ctx.message.internal) return next();
    const command = parseChatCommand(item.text);
    ctx.command = command;
    if (command.kind !== "none" && (await handleCommand(item, command, ports))) return;
    await next();
  };
}
