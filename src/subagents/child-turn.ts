import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import type { LlmClient } from "../agent/llm-client.js";
import { runTurn, type TurnInput, type TurnResult } from "../agent/run-turn.js";
import type { TurnHooks } from "../agent/turn-hooks.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { ToolDefinition } from "../plugin-api/types.js";
import type { StoredChatMessage } from "../sessions/types.js";
import { childHooks } from "./child-hooks.js";
import type { RunRecord } from "./run-folder.js";

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

export interface ChildTurn {
  record: RunRecord;
  folder: string;
  tools: ToolDefinition[];
  settings: ChildTurnSettings;
  cwd: string;
  /** The messages of its transcript so far (none for a new run): the turn goes on from them. */
  prior: StoredChatMessage[];
  /** A parked batch's answer: its calls run first (`TurnInput.resume`). */
  resume?: TurnInput["resume"];
  signal: AbortSignal;
  drain: AbortSignal;
  clock: Clock;
  logger: Logger;
  /** One line in `logs/run.log`. */
  log(line: string): Promise<void>;
}

/**
 * One turn of a child (docs/tools.md, Sub-agents): the system prompt and the brief, then what its transcript
 * (`transcript.jsonl` in its folder) holds, appended to as it goes; a tool call and its result are logged. Never
 * throws: a throw is returned as `error`. `reply` is the text of the last response (what a cut-off reply wrote).
 */
export async function runChildTurn(
  child: ChildTurn,
): Promise<{ result?: TurnResult; error?: unknown; reply: string }> {
  const { record, folder, settings } = child;
  let reply = "";
  try {
    const result = await runTurn({
      turnId: `subagent:${record.id}`,
      sessionKey: record.sessionKey,
      model: settings.model,
      messages: [
        { role: "system", content: CHILD_SYSTEM_PROMPT },
        { role: "user", content: record.brief },
        ...child.prior,
      ],
      tools: child.tools,
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
          void child.log(`tool-call ${event.name} ${event.callId}`);
        }
        if (event.type === "tool-result")
          void child.log(`tool-result ${event.name} ${event.callId} ok=${event.ok}`);
      },
      takeJoined: async () => [],
      signal: child.signal,
      drain: child.drain,
      clock: child.clock,
      timeouts: settings.timeouts,
      maxOutputTokens: settings.maxOutputTokens,
      cwd: child.cwd,
      log: child.logger,
      hooks: childHooks(settings.hooks(child.cwd)),
      ...(child.resume ? { resume: child.resume } : {}),
    });
    return { result, reply };
  } catch (error) {
    return { error, reply };
  }
}
