import type { Env } from "../core/paths.js";
import type { OutcomeBody } from "../plugin-api/outcome-body.js";
import type { TurnListener } from "./agent-stream.js";

/** ANSI colour is used only on a terminal, and never when `NO_COLOR` is set to anything but "" (no-color.org). */
export function useColor(isTTY: boolean, env: Env): boolean {
  return isTTY && !(env.NO_COLOR !== undefined && env.NO_COLOR !== "");
}

/**
 * Text from the gateway (model output, tool arguments) without control characters other than newline and tab:
 * a reply must not move the cursor, retitle the window or hide text with escape sequences.
 */
export function sanitize(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}

/** A tool call as one line: `⚙ bash {"command":"ls"}`, whitespace collapsed, cut at `max` characters. */
export function toolLine(name: string, args: string, max = 160): string {
  const flat = sanitize(`${name} ${args}`.replace(/\s+/g, " ").trim());
  return `⚙ ${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}`;
}

/**
 * `clawdis agent` on a terminal: the reply as it streams, each tool call as one dim line, a failed tool as one
 * line, and at the end whatever the stream did not show (a command's answer, a notice such as a timeout, a
 * "new session" note). A newline always ends the output. `color` false: the same text without escape codes.
 */
export class LiveReply implements TurnListener {
  private atLineStart = true;
  /** The streamed texts between tool calls: a payload equal to one of their joins was already shown. */
  private readonly segments: string[] = [];
  private open = false;

  constructor(
    private readonly write: (text: string) => void,
    private readonly color: boolean,
  ) {}

  delta(text: string): void {
    const clean = sanitize(text);
    if (clean.length === 0) return;
    if (!this.open) this.segments.push("");
    this.open = true;
    this.segments[this.segments.length - 1] += clean;
    this.put(clean);
  }

  toolCall(name: string, args: string): void {
    this.open = false;
    this.line(this.dim(toolLine(name, args)));
  }

  toolResult(name: string, ok: boolean, output: string): void {
    if (ok) return;
    const first = sanitize(output).split("\n")[0]?.slice(0, 160) ?? "";
    this.line(this.dim(`✗ ${sanitize(name)} failed${first ? `: ${first}` : ""}`));
  }

  /** The turn is over: prints the payloads the stream did not show, and ends the line. */
  finish(reply: OutcomeBody): void {
    const streamed = this.segments.filter((t) => t.trim().length > 0);
    const shown = new Set(
      [streamed.at(-1) ?? "", streamed.join(""), streamed.join("\n"), streamed.join("\n\n")].map((t) =>
        t.trim(),
      ),
    );
    const texts = (reply.payloads ?? []).map((p) => (typeof p.text === "string" ? sanitize(p.text) : ""));
    for (const text of texts) {
      if (text.trim().length === 0 || shown.has(text.trim())) continue;
      this.line(text);
    }
    const reason = reply.meta?.stopReason;
    if (texts.every((t) => t.trim().length === 0) && reason !== "end" && reason !== "command") {
      this.line(this.dim(`(turn ended: ${reason ?? "unknown"})`));
    }
    if (!this.atLineStart) this.put("\n");
  }

  private dim(text: string): string {
    return this.color ? `\x1b[2m${text}\x1b[22m` : text;
  }

  private put(text: string): void {
    this.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  private line(text: string): void {
    if (!this.atLineStart) this.put("\n");
    this.put(`${text}\n`);
  }
}
