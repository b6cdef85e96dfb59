/**
 * The snippet a search hit shows (pure): the match with some text around it, on one line, with the match's place
 * in it so that a terminal can mark it. Whitespace runs become one space; control characters become `?` (a
 * message must not move a terminal's cursor); a cut is shown as `…`; a surrogate pair is never cut in two.
 */
export interface Snippet {
  text: string;
  /** Where the match is in `text` (UTF-16 offsets, end exclusive). */
  start: number;
  end: number;
}

/** Characters of context before the match, at most. */
export const SNIPPET_BEFORE = 60;
/** The longest snippet, `…` included. */
export const SNIPPET_WIDTH = 160;

// biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/g;

function clean(text: string): string {
  return text.replace(CONTROL, "?").replace(/\s+/g, " ");
}

/** `index` moved off the low half of a surrogate pair (so that a cut there keeps the pair whole). */
function safeCut(text: string, index: number, towardStart: boolean): number {
  const code = text.charCodeAt(index);
  if (index > 0 && index < text.length && code >= 0xdc00 && code <= 0xdfff) {
    return towardStart ? index - 1 : index + 1;
  }
  return index;
}

export function snippetOf(text: string, start: number, end: number, width = SNIPPET_WIDTH): Snippet {
  let before = clean(text.slice(0, start)).trimStart();
  let match = clean(text.slice(start, end));
  let after = clean(text.slice(end)).trimEnd();
  if (match.length > width - 2) {
    match = `${match.slice(0, safeCut(match, width - 2, true))}…`;
    after = "";
  }
  const beforeRoom = Math.min(SNIPPET_BEFORE, Math.max(0, width - match.length - 1));
  if (before.length > beforeRoom) {
    before = `…${before.slice(safeCut(before, before.length - beforeRoom + 1, false))}`;
  }
  const afterRoom = Math.max(0, width - before.length - match.length);
  if (after.length > afterRoom) {
    after = afterRoom <= 1 ? "…" : `${after.slice(0, safeCut(after, afterRoom - 1, true))}…`;
  }
  return { text: before + match + after, start: before.length, end: before.length + match.length };
}
