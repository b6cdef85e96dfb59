/**
 * The agent's Markdown as Telegram shows it: `html` for `parse_mode: "HTML"` (bold, italic, strikethrough,
 * inline code, fenced code blocks with their language, links; headings become bold lines), and `plain`, the same
 * text with the Markdown markers taken out and no escapes, sent when Telegram refuses the HTML. Pure.
 *
 * Neither output is longer, in visible characters, than the input: Telegram's 4096 limit counts the text after
 * the tags are parsed, so a part of at most 4096 input characters always fits one message.
 */
export interface RenderedText {
  html: string;
  plain: string;
}

const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/;
const INLINE =
  /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([^*\n]*?\S)\*\*|__(?=\S)([^_\n]*?\S)__|~~(?=\S)([^~\n]*?\S)~~|(?<![*\w])\*(?=[^*\s])([^*\n]*?[^*\s])\*(?![*\w])|(?<![_\w])_(?=[^_\s])([^_\n]*?[^_\s])_(?![_\w])|\[([^\]\n]+)\]\(((?:https?|tg|mailto):[^)\s]+)\)/g;

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const escapeAttribute = (text: string): string => escapeHtml(text).replace(/"/g, "&quot;");

export function renderMarkdown(markdown: string): RenderedText {
  const html: string[] = [];
  const plain: string[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1] ?? "```";
      const language = fence[2] ?? "";
      const body: string[] = [];
      let j = i + 1;
      for (; j < lines.length; j++) {
        const close = FENCE.exec(lines[j] ?? "");
        if (close && close[1]?.[0] === marker[0] && (close[1]?.length ?? 0) >= marker.length && !close[2])
          break;
        body.push(lines[j] ?? "");
      }
      const code = body.join("\n");
      const open = language ? `<pre><code class="language-${escapeAttribute(language)}">` : "<pre><code>";
      html.push(`${open}${escapeHtml(code)}</code></pre>`);
      plain.push(code);
      i = j;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const inner = renderInline(heading[1] ?? "");
      html.push(`<b>${inner.html}</b>`);
      plain.push(inner.plain);
      continue;
    }
    const inner = renderInline(line);
    html.push(inner.html);
    plain.push(inner.plain);
  }
  return { html: html.join("\n"), plain: plain.join("\n") };
}

function renderInline(text: string): RenderedText {
  let html = "";
  let plain = "";
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    const at = match.index ?? 0;
    html += escapeHtml(text.slice(last, at));
    plain += text.slice(last, at);
    last = at + match[0].length;
    const [, ticks, code, bold, bold2, strike, italic, italic2, linkText, href] = match;
    if (ticks !== undefined && code !== undefined) {
      const inner = code.length > 2 && code.startsWith(" ") && code.endsWith(" ") ? code.slice(1, -1) : code;
      html += `<code>${escapeHtml(inner)}</code>`;
      plain += inner;
      continue;
    }
    const wrapped = bold ?? bold2 ?? strike ?? italic ?? italic2;
    if (wrapped !== undefined) {
      const tag = bold !== undefined || bold2 !== undefined ? "b" : strike !== undefined ? "s" : "i";
      const inner = renderInline(wrapped);
      html += `<${tag}>${inner.html}</${tag}>`;
      plain += inner.plain;
      continue;
    }
    if (linkText !== undefined && href !== undefined) {
      const inner = renderInline(linkText);
      html += `<a href="${escapeAttribute(href)}">${inner.html}</a>`;
      plain += inner.plain === href ? href : `${inner.plain} (${href})`;
    }
  }
  html += escapeHtml(text.slice(last));
  plain += text.slice(last);
  return { html, plain };
}
