/**
 * Markdown for a terminal, one line at a time, so that a streamed reply is rendered as its lines complete and
 * each line is printed once. Pure: `renderMarkdownLine` takes a line (no newline) and the block state, and
 * returns the styled line and the next state.
 *
 * What it renders: ATX headings (`# …`, bold; `#`/`##` also underlined), `-`/`*`/`+` list items as `•`, numbered
 * items, block quotes (a dim bar), thematic breaks, fenced code blocks (``` or ~~~; the fence lines dim, the code
 * as it is in the code colour, nothing inside parsed), and inline `code`, **bold** or __bold__, *italic* or _italic_
 * (an underscore inside a word, as in snake_case, is not emphasis), ~~strike~~ and [links](url) (the text
 * underlined, the URL after it). Backslash escapes print the character. Anything else is printed as it is.
 * The input is already free of control characters (sanitize); only the styles add escape sequences.
 */

/** The ANSI styles the renderer uses (terminal-style.ts's createStyle gives identity functions when plain). */
export interface MarkdownStyle {
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  code(text: string): string;
  strike(text: string): string;
}

/** Between lines: whether a fenced code block is open, and with which fence. */
export interface MarkdownState {
  fence?: { char: "`" | "~"; length: number };
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;

export function renderMarkdownLine(
  line: string,
  state: MarkdownState,
  style: MarkdownStyle,
): { text: string; state: MarkdownState } {
  const fence = FENCE.exec(line);
  if (state.fence) {
    const open = state.fence;
    if (fence && fence[1]![0] === open.char && fence[1]!.length >= open.length && line.trim() === fence[1]) {
      return { text: style.dim(line), state: {} };
    }
    return { text: style.code(line), state };
  }
  if (fence) {
    const marker = fence[1]!;
    return {
      text: style.dim(line),
      state: { fence: { char: marker[0] as "`" | "~", length: marker.length } },
    };
  }
  return { text: renderBlockLine(line, style), state };
}

function renderBlockLine(line: string, style: MarkdownStyle): string {
  const heading = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+\s*)?$/.exec(line);
  if (heading) {
    const text = renderInline(heading[2]!, style);
    return heading[1]!.length <= 2 ? style.bold(style.underline(text)) : style.bold(text);
  }
  if (/^ {0,3}([-*_])(?:\s*\1){2,}\s*$/.test(line)) return style.dim("─".repeat(24));
  const quote = /^ {0,3}>\s?(.*)$/.exec(line);
  if (quote) return `${style.dim("│")} ${renderInline(quote[1]!, style)}`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) {
    const task = /^\[([ xX])\]\s+(.*)$/.exec(bullet[2]!);
    const body = task ? `${task[1] === " " ? "☐" : "☑"} ${task[2]}` : bullet[2]!;
    return `${bullet[1]}• ${renderInline(body, style)}`;
  }
  const numbered = /^(\s*)(\d{1,9})([.)])\s+(.*)$/.exec(line);
  if (numbered) return `${numbered[1]}${numbered[2]}${numbered[3]} ${renderInline(numbered[4]!, style)}`;
  return renderInline(line, style);
}

/** Private-use characters stand in for escaped characters and code spans while emphasis is matched. */
const HOLE = "\uE000";

/** Inline Markdown of one line. Pure. */
export function renderInline(text: string, style: MarkdownStyle): string {
  const held: string[] = [];
  const hold = (rendered: string) => `${HOLE}${held.push(rendered) - 1}${HOLE}`;
  let out = text
    // Code spans first: nothing inside them is markup.
    .replace(/(`+)(?!`)(.+?)(?<!`)\1(?!`)/g, (_m, _ticks: string, code: string) =>
      hold(
        style.code(code.length > 2 && code.startsWith(" ") && code.endsWith(" ") ? code.slice(1, -1) : code),
      ),
    )
    .replace(/\\([\\`*_{}[\]()#+\-.!>~|])/g, (_m, c: string) => hold(c));
  out = out
    .replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) =>
      hold(`${style.underline(label)} ${style.dim(`(${url})`)}`),
    )
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, (_m, t: string) => style.bold(t))
    .replace(/(?<![\p{L}\p{N}_])__(?=\S)(.+?)(?<=\S)__(?![\p{L}\p{N}_])/gu, (_m, t: string) => style.bold(t))
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, (_m, t: string) => style.strike(t))
    .replace(/(?<![*\\])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?!\*)/g, (_m, t: string) => style.italic(t))
    .replace(/(?<![\p{L}\p{N}_])_(?=\S)(.+?)(?<=\S)_(?![\p{L}\p{N}_])/gu, (_m, t: string) => style.italic(t));
  // Held pieces may themselves hold escapes (a link label with a code span is not supported: kept literal).
  return out.replace(new RegExp(`${HOLE}(\\d+)${HOLE}`, "g"), (_m, i: string) => held[Number(i)] ?? "");
}

/**
 * A streamed reply rendered line by line: `push` takes deltas and writes each line once it is complete (its
 * newline included); `flush` writes what is left of the last line (at a tool call, the end of the turn, or an
 * interruption) and starts the next segment outside any code block. Nothing is written twice.
 */
export class MarkdownStream {
  private pending = "";
  private state: MarkdownState = {};

  constructor(
    private readonly write: (text: string) => void,
    private readonly style: MarkdownStyle,
  ) {}

  push(delta: string): void {
    this.pending += delta;
    let newline = this.pending.indexOf("\n");
    while (newline >= 0) {
      this.emit(this.pending.slice(0, newline), "\n");
      this.pending = this.pending.slice(newline + 1);
      newline = this.pending.indexOf("\n");
    }
  }

  flush(): void {
    if (this.pending.length > 0) this.emit(this.pending, "");
    this.pending = "";
    this.state = {};
  }

  private emit(line: string, end: string): void {
    const rendered = renderMarkdownLine(line, this.state, this.style);
    this.state = rendered.state;
    this.write(`${rendered.text}${end}`);
  }
}

/** A whole text (an answer that was not streamed) rendered as the stream would have. Pure. */
export function renderMarkdown(text: string, style: MarkdownStyle): string {
  let state: MarkdownState = {};
  return text
    .split("\n")
    .map((line) => {
      const rendered = renderMarkdownLine(line, state, style);
      state = rendered.state;
      return rendered.text;
    })
    .join("\n");
}
