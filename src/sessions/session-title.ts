import type { MessageEntry, StoredChatMessage, TranscriptEntry } from "./types.js";

/**
 * Session titles (docs/sessions.md): after a session's first exchange, one best-effort sidecar call names it in a
 * few words, kept on its entry as `title`. Pure: what the model is asked, and what of its answer is kept.
 */

/** The start of the system prompt of a title call (test/fakes/openai-server.ts answers such calls apart). */
export const TITLE_PROMPT_START = "Name this conversation";

export const TITLE_PROMPT =
  `${TITLE_PROMPT_START} in 2 to 6 words, in the language it is written in, for a list of conversations. ` +
  "Answer with the title alone: no quotes, no full stop, no explanation.";

/** How much of each side of the exchange the title call is shown. */
const EXCERPT_CHARS = 1000;
/** The longest title kept, in characters. */
export const TITLE_MAX_CHARS = 60;

/**
 * The first exchange of a transcript: the first message the person wrote and the first final answer after it.
 * Undefined until both are there.
 */
export function firstExchange(
  entries: readonly TranscriptEntry[],
): { user: string; reply: string } | undefined {
  let user: string | undefined;
  for (const e of entries) {
    if (e.type !== "message") continue;
    const m = e as MessageEntry;
    if (user === undefined) {
      if (
        m.message.role === "user" &&
        typeof m.message.content === "string" &&
        m.message.content.trim() !== ""
      )
        user = m.message.content;
      continue;
    }
    if (m.message.role === "assistant" && m.meta?.final === true && (m.message.tool_calls?.length ?? 0) === 0)
      return { user, reply: m.message.content ?? "" };
  }
  return undefined;
}

/** The messages of the title call for `exchange`. */
export function titleMessages(exchange: { user: string; reply: string }): StoredChatMessage[] {
  return [
    { role: "system", content: TITLE_PROMPT },
    {
      role: "user",
      content: `person: ${exchange.user.slice(0, EXCERPT_CHARS)}\nassistant: ${exchange.reply.slice(0, EXCERPT_CHARS)}`,
    },
  ];
}

/**
 * What of the model's answer becomes the title: its first non-empty line, without surrounding quotes, a leading
 * "Title:", markdown emphasis or a final full stop, spaces collapsed, cut at a word within TITLE_MAX_CHARS.
 * Undefined when nothing is left.
 */
export function cleanTitle(raw: string): string | undefined {
  const line = raw
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  if (line === undefined) return undefined;
  let title = line
    .replace(/^title\s*:\s*/i, "")
    .replace(/^[*_#\s]+|[*_\s]+$/g, "")
    .replace(/^["'“”‘’«»]+|["'“”‘’«»]+$/g, "")
    .replace(/[.。]+$/, "")
    .replace(/\s+/g, " ")
    .trim();
  if (title.length > TITLE_MAX_CHARS) {
    const cut = title.slice(0, TITLE_MAX_CHARS + 1);
    const space = cut.lastIndexOf(" ");
    title = (space > 0 ? cut.slice(0, space) : cut.slice(0, TITLE_MAX_CHARS)).trim();
  }
  return title.length > 0 ? title : undefined;
}
