/**
 * Markdown (what models write) to WhatsApp's own formatting, and the split of a reply into sendable parts.
 *
 * Formatting: `**b**`/`__b__` → `*b*`, `*i*`/`_i_` → `_i_`, `~~s~~` → `~s~`, `# Heading` → `*Heading*`,
 * `[text](url)` → `text (url)`, `* item` → `- item`; inline code and fenced code blocks are kept as they are
 * (WhatsApp shows both in monospace; a fence loses its language tag). Text inside code is never touched.
 *
 * Split: deterministic (a restart splits the same reply the same way); every part is at most `max` characters
 * after formatting; cuts prefer a paragraph break, then a line break, then a space; a cut inside a code block
 * closes the fence and opens it again in the next part.
 */

/** WhatsApp takes about 65 536 characters in one message; stay below it. */
export const WHATSAPP_MAX_TEXT = 65_000;

const FENCE = /^\s*(```|~~~)/;

/** Converts Markdown to WhatsApp formatting. */
export function markdownToWhatsapp(markdown: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of markdown.split("\n")) {
    const fence = FENCE.exec(line);
    if (fence) {
      out.push(inFence ? line.trimEnd() : line.replace(/^(\s*)(```|~~~).*$/, "$1```"));
      inFence = !inFence;
      continue;
    }
    out.push(inFence ? line : formatLine(line));
  }
  return out.join("\n");
}

function formatLine(line: string): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `*${stripEmphasis(formatInline(heading[1] ?? ""))}*`;
  const bullet = /^(\s*)[*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1]}- ${formatInline(bullet[2] ?? "")}`;
  return formatInline(line);
}

/** Inline rules, applied outside `code` spans only. */
function formatInline(text: string): string {
  return text
    .split(/(`[^`\n]+`)/)
    .map((piece, i) => (i % 2 === 1 ? piece : formatPlain(piece)))
    .join("");
}

const BOLD_MARK = "\u0000B\u0000";

function formatPlain(text: string): string {
  return text
    .replace(/\[([^\]\n]+)\]\((\S+?)\)/g, (_m, label: string, url: string) =>
      label === url ? url : `${label} (${url})`,
    )
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, `${BOLD_MARK}$1${BOLD_MARK}`)
    .replace(/__(?=\S)(.+?)(?<=\S)__/g, `${BOLD_MARK}$1${BOLD_MARK}`)
    .replace(/(?<![*\w])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![*\w])/g, "_$1_")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "~$1~")
    .replaceAll(BOLD_MARK, "*");
}

function stripEmphasis(text: string): string {
  return /^\*(.*)\*$/.test(text) ? text.slice(1, -1) : text;
}

/** The reply as WhatsApp parts: formatted, then split at `max` (see the module comment). */
export function splitForWhatsapp(markdown: string, max = WHATSAPP_MAX_TEXT): string[] {
  const text = markdownToWhatsapp(markdown).trim();
  if (text === "") return [];
  const parts: string[] = [];
  let rest = text;
  let reopen = "";
  while (rest.length > 0) {
    const budget = max - reopen.length;
    if (budget < 16) throw new Error(`a part of at most ${max} characters cannot carry a code fence`);
    if (rest.length <= budget) {
      parts.push(reopen + rest);
      break;
    }
    // Leave room for a closing fence ("\n```") in case the cut lands inside a code block.
    let cut = cutAt(rest, budget - 4);
    const head = rest.slice(0, cut);
    const open = openFence(reopen + head);
    const part = open ? `${reopen}${head.trimEnd()}\n\`\`\`` : `${reopen}${head.trimEnd()}`;
    parts.push(part);
    reopen = open ? "```\n" : "";
    while (cut < rest.length && /\s/.test(rest[cut] ?? "") && rest[cut] !== "\n") cut++;
    rest = rest.slice(cut).replace(/^\n+/, "");
  }
  return parts.filter((part) => part.trim() !== "");
}

/** Where to cut `text` so the head is at most `limit` long: paragraph, line, space, else hard. */
function cutAt(text: string, limit: number): number {
  const window = text.slice(0, limit + 1);
  for (const sep of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(sep);
    if (at > limit / 2) return at;
  }
  return limit;
}

/** Whether `text` ends inside a code block (an odd number of fence lines). */
function openFence(text: string): boolean {
  let open = false;
  for (const line of text.split("\n")) if (FENCE.test(line)) open = !open;
  return open;
}
