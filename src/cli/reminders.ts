import type { ConfigSectionsSource } from "../core/config-sections.js";
import { ClawdisError } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { stateDir } from "../core/paths.js";
import { effectiveTimeZone } from "../core/time-zone.js";
import {
  describeRow,
  type ReminderRow,
  type RemindersReport,
  reminderRow,
  remindersReport,
} from "../reminders/reminder-list.js";
import { RemindersFile, remindersPath } from "../reminders/reminders-file.js";
import { resolveWhen } from "../reminders/schedule.js";
import { whyInvalidSessionKey } from "../sessions/session-key-rules.js";
import { connectGateway, type GatewayConnection } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";
import { localRequest } from "./local-request.js";

/**
 * `clawdis reminders list|add|rm` (docs/cli.md): through the running gateway of this state directory when one
 * answers (`/api/reminders`: it fires what is added at once), else on `<state>/reminders.json` itself (the next
 * gateway fires it). A reminder added here is the owner's: its turn gets the owner's tools and answers in the chat
 * its session was last used from.
 */
export type RemindersCommand =
  | { action: "list"; json?: boolean }
  | { action: "add"; when: string; text: string; session?: string; json?: boolean }
  | { action: "rm"; id: string };

interface Target {
  gateway: GatewayConnection | undefined;
  file: RemindersFile;
  timeZone: string;
}

async function target(io: CliIO, sections: ConfigSectionsSource | undefined): Promise<Target> {
  const { loadConfig } = await import("../core/config.js");
  const { config } = loadConfig(io.env, sections ? await sections(io.env) : undefined);
  const timeZone = effectiveTimeZone(config.gateway.timeZone);
  const gateway = await connectGateway(config, io.env);
  const file = new RemindersFile({
    path: remindersPath(stateDir(io.env)),
    timeZone: () => timeZone,
    now: Date.now,
    // A file set aside (it did not parse) is said on stderr.
    logger: createLogger({ sink: (line) => io.stderr(`clawdis reminders: ${line.message}\n`) }),
  });
  return { gateway, file, timeZone };
}

async function call(gateway: GatewayConnection, method: string, path: string, body?: unknown) {
  const { status, text } = await localRequest(`${gateway.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${gateway.token}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ClawdisError(
      "GATEWAY_UNREACHABLE",
      `the gateway answered ${path} with something that is not JSON`,
    );
  }
  return { status, body: parsed as Record<string, unknown> };
}

/** An answer of the gateway that is not one the command expects: an error naming it. */
function refused(answer: { status: number; body: Record<string, unknown> }): ClawdisError {
  const message = typeof answer.body.message === "string" ? `: ${answer.body.message}` : "";
  return new ClawdisError("GATEWAY_UNREACHABLE", `the gateway answered HTTP ${answer.status}${message}`);
}

export async function runReminders(
  command: RemindersCommand,
  io: CliIO,
  sections?: ConfigSectionsSource,
): Promise<number> {
  if (command.action === "add" && command.session !== undefined) {
    const bad = whyInvalidSessionKey(command.session);
    if (bad !== undefined) {
      io.stderr(`clawdis reminders add: --session: ${bad}\n`);
      return EXIT.usage;
    }
  }
  const { gateway, file, timeZone } = await target(io, sections);
  switch (command.action) {
    case "list": {
      let report: RemindersReport;
      if (gateway) {
        const answer = await call(gateway, "GET", "/api/reminders");
        if (answer.status !== 200) throw refused(answer);
        report = answer.body as unknown as RemindersReport;
      } else report = remindersReport(file.path, await file.read(), Date.now(), timeZone);
      io.stdout(command.json ? `${JSON.stringify(report, null, 2)}\n` : humanList(report));
      return EXIT.ok;
    }
    case "add": {
      let row: ReminderRow | string;
      const spec = {
        when: command.when,
        text: command.text,
        ...(command.session !== undefined ? { session: command.session } : {}),
      };
      if (gateway) {
        const answer = await call(gateway, "POST", "/api/reminders", spec);
        if (answer.status !== 201 && answer.status !== 400) throw refused(answer);
        row =
          answer.status === 201 ? (answer.body as unknown as ReminderRow) : String(answer.body.message ?? "");
      } else {
        const now = Date.now();
        const when = resolveWhen(command.when, now, timeZone);
        if ("error" in when) row = when.error;
        else {
          const { when: _w, ...rest } = spec;
          const reminder = await file.add({
            ...rest,
            when,
            setBy: { authority: "owner", channel: "cli", senderId: "owner" },
          });
          row = reminderRow(reminder, now, timeZone);
        }
      }
      if (typeof row === "string") {
        io.stderr(`clawdis reminders add: ${row}\n`);
        return EXIT.usage;
      }
      io.stdout(command.json ? `${JSON.stringify(row, null, 2)}\n` : `added ${describeRow(row)}\n`);
      return EXIT.ok;
    }
    case "rm": {
      let removed: boolean;
      if (gateway) {
        const answer = await call(gateway, "DELETE", `/api/reminders/${encodeURIComponent(command.id)}`);
        if (answer.status !== 200 && answer.status !== 404) throw refused(answer);
        removed = answer.status === 200;
      } else removed = await file.remove(command.id);
      if (!removed) {
        io.stderr(`clawdis reminders rm: no reminder "${command.id}"\n`);
        return EXIT.failed;
      }
      io.stdout(`removed ${command.id}\n`);
      return EXIT.ok;
    }
  }
}

/** The list for people: one line per reminder, then the entries skipped and why. Pure. */
export function humanList(report: RemindersReport): string {
  const lines: string[] = [];
  if (report.unusable !== undefined) {
    lines.push(`${report.path} does not parse: ${report.unusable}; none of its reminders fire until it does`);
  } else if (report.reminders.length === 0 && report.bad.length === 0) {
    lines.push(`no reminders (${report.path})`);
  } else {
    lines.push(`reminders in ${report.path} (time zone ${report.timeZone}):`);
    for (const row of report.reminders) lines.push(`  ${describeRow(row)}`);
  }
  for (const bad of report.bad) {
    lines.push(`  skipped: entry ${bad.index + 1}${bad.id !== undefined ? ` (${bad.id})` : ""}: ${bad.why}`);
  }
  return `${lines.join("\n")}\n`;
}
