import { requireString, ToolArgError } from "../agent/tools/tool-args.js";
import type { ToolDefinition } from "../plugin-api/types.js";
import { describeRow, type ReminderRow } from "./reminder-list.js";

/**
 * `remind`: sets a reminder for the session of the turn, answered later in the chat the turn came from, with the
 * tools of the turn's sender (docs/tools.md, Reminders). `add` does the rest: it resolves `when` in the configured
 * time zone and writes `<state>/reminders.json`; a string it returns is the error the model is told.
 */
export function remindTool(
  add: (when: string, text: string) => Promise<ReminderRow | string>,
): ToolDefinition {
  return {
    name: "remind",
    description:
      "Set a reminder: at the time given, this chat gets the text back as a new message for you to act on. " +
      'when: a duration from now ("90s", "20m", "1h30m", "2d"), an ISO time ("2026-12-24T09:00", local time unless ' +
      'it has an offset), or a cron expression for a repeat ("0 9 * * 1-5": weekdays at 9:00).',
    parameters: {
      type: "object",
      properties: {
        when: { type: "string", description: "A duration, an ISO time, or a cron expression." },
        text: { type: "string", description: "What to be reminded of." },
      },
      required: ["when", "text"],
      additionalProperties: false,
    },
    async execute(args) {
      let when: string;
      let text: string;
      try {
        when = requireString(args, "when");
        text = requireString(args, "text");
      } catch (error) {
        if (error instanceof ToolArgError) return { ok: false, output: `remind: ${error.message}` };
        throw error;
      }
      const added = await add(when, text);
      if (typeof added === "string") return { ok: false, output: `remind: ${added}` };
      return { ok: true, output: `reminder set: ${describeRow(added)}` };
    },
  };
}
