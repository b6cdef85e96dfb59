import type { MarkdownStyle } from "./markdown-terminal.js";

/**
 * ANSI styling, only when writing to a terminal that takes colour; plain text otherwise (pipes, files, tests,
 * `NO_COLOR`). Also what the Markdown renderer styles with.
 */
export interface Style extends MarkdownStyle {
  dim(text: string): string;
  red(text: string): string;
  bold(text: string): string;
}

export function createStyle(color: boolean): Style {
  if (!color) {
    const plain = (t: string) => t;
    return {
      dim: plain,
      red: plain,
      bold: plain,
      italic: plain,
      underline: plain,
      code: plain,
      strike: plain,
    };
  }
  return {
    dim: (t) => `\x1b[2m${t}\x1b[22m`,
    red: (t) => `\x1b[31m${t}\x1b[39m`,
    bold: (t) => `\x1b[1m${t}\x1b[22m`,
    italic: (t) => `\x1b[3m${t}\x1b[23m`,
    underline: (t) => `\x1b[4m${t}\x1b[24m`,
    code: (t) => `\x1b[36m${t}\x1b[39m`,
    strike: (t) => `\x1b[9m${t}\x1b[29m`,
  };
}

/**
 * Text from the gateway (model output, tool arguments) without control characters other than newline and tab:
 * a reply must not be able to move the cursor, retitle the window or hide text with escape sequences.
 */
export function sanitize(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "");
}

/** A tool call as one line: `⚙ bash {"command":"ls"}`, whitespace collapsed, cut at `max` characters. */
export function formatToolCall(name: string, args: string, max = 160): string {
  const flat = sanitize(`${name} ${args}`.replace(/\s+/g, " ").trim());
  return `⚙ ${flat.length > max ? `${flat.slice(0, max - 1)}…` : flat}`;
}
