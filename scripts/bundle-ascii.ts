/**
 * The bundle as ASCII text: every character past U+007F written as a `\uXXXX` escape (a surrogate pair as two).
 * bin/clawdis.js reads the bundle as latin1, which makes V8 a one-byte string in a third of the time a UTF-8
 * decode of the same 2 MB takes (and half its memory); text with one non-ASCII byte would decode as UTF-8 only.
 * esbuild escapes string literals already; what it leaves are comments and regular-expression literals, where an
 * escape means the same character (comments mean nothing). The one place where it would not is the raw text of a
 * `String.raw` template (the web chat's page script): there the source must write the escape itself, and
 * `toAscii` refuses the bundle, naming the line. Pure.
 */
export function toAscii(text: string): string {
  // Fast path: most of a bundle is ASCII already.
  if (!/[\u0080-\uffff]/.test(text)) return text;
  const raw = rawTemplateSpans(text);
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (raw.some(([start, end]) => i >= start && i < end)) {
      const line = text.slice(0, i).split("\n").length;
      throw new Error(
        `bundle line ${line}: ${JSON.stringify(text[i])} in a String.raw template; write it as \\u${code.toString(16).padStart(4, "0")} in the source`,
      );
    }
    out += `${text.slice(from, i)}\\u${code.toString(16).padStart(4, "0")}`;
    from = i + 1;
  }
  return out + text.slice(from);
}

/** Where the raw text of each `String.raw` template lies: [start, end) of what is between its backticks. */
function rawTemplateSpans(text: string): [number, number][] {
  const spans: [number, number][] = [];
  const opening = "String.raw`";
  for (let at = text.indexOf(opening); at !== -1; at = text.indexOf(opening, at + 1)) {
    const start = at + opening.length;
    let i = start;
    let depth = 0;
    for (; i < text.length; i++) {
      const ch = text[i];
      if (ch === "\\") i++;
      else if (depth === 0 && ch === "`") break;
      else if (ch === "$" && text[i + 1] === "{") {
        depth++;
        i++;
      } else if (depth > 0 && ch === "}") depth--;
    }
    spans.push([start, i]);
  }
  return spans;
}
