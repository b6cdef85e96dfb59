/** ANSI styling, only when writing to a terminal; plain text otherwise (pipes, files, tests). */
export interface Style {
  dim(text: string): string;
  red(text: string): string;
  bold(text: string): string;
}

export function createStyle(isTTY: boolean): Style {
  if (!isTTY) return { dim: (t) => t, red: (t) => t, bold: (t) => t };
  return {
    dim: (t) => `\x1b[2m${t}\x1b[22m`,
    red: (t) => `\x1b[31m${t}\x1b[39m`,
    bold: (t) => `\x1b[1m${t}\x1b[22m`,
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
