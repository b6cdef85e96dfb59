export type HookBody = { ok: true; text: string; messageId?: string } | { ok: false; message: string };

function isJsonType(contentType: string): boolean {
  return /^application\/([\w.+-]+\+)?json\b/.test(contentType);
}

function fromJson(value: unknown): HookBody {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, message: 'a JSON body must be an object like {"text": "…"}' };
  }
  const body = value as Record<string, unknown>;
  const raw = body.text ?? body.message;
  if (typeof raw !== "string" || raw.trim().length === 0) {
    return { ok: false, message: 'the JSON body needs a non-empty string "text" (or "message")' };
  }
  const id = body.messageId;
  if (id !== undefined && !(typeof id === "string" && id.length > 0) && typeof id !== "number") {
    return { ok: false, message: '"messageId" must be a non-empty string' };
  }
  return { ok: true, text: raw.trim(), ...(id === undefined ? {} : { messageId: String(id) }) };
}

/**
 * Turns a webhook request body into the text for the agent. Pure.
 * - `application/json` (or `+json`): `{ "text" | "message": string, "messageId"?: string }`;
 * - `text/*`: the body is the text;
 * - no or another content type (curl's `-d` sends form encoding): a body that is a JSON object with a text is
 *   read as JSON, anything else as plain text.
 * The text is trimmed (`echo … | curl --data-binary @-` adds a newline); a blank text is refused.
 */
export function parseHookBody(raw: string, contentType: string | undefined): HookBody {
  const type = (contentType ?? "").trim().toLowerCase();
  if (isJsonType(type)) {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return { ok: false, message: "the body is not valid JSON" };
    }
    return fromJson(value);
  }
  if (!type.startsWith("text/") && raw.trimStart().startsWith("{")) {
    try {
      const sniffed = fromJson(JSON.parse(raw));
      if (sniffed.ok) return sniffed;
    } catch {
      // not JSON after all: plain text
    }
  }
  const text = raw.trim();
  if (text.length === 0)
    return { ok: false, message: "the body is empty: send the text to hand to the agent" };
  return { ok: true, text };
}
