import type { Gateway } from "../gateway.js";
import { whyInvalidSessionKey } from "../sessions/session-key-rules.js";
import type { HttpServer } from "./http-server.js";
import { sendJson } from "./http-server.js";

/**
 * `/api/reminders` (docs/http-api.md): what `clawdis reminders` asks the running gateway. A reminder added here
 * is the owner's (the caller holds the gateway token): its turn gets the owner's tools, and it answers in the chat
 * the session was last used from.
 * - `GET /api/reminders`: the report (reminder-list.ts: every reminder, its next time, the entries skipped);
 * - `POST /api/reminders` `{when, text, session?}`: 201 with the reminder's row, 400 when `when` is not a time;
 * - `DELETE /api/reminders/:id`: 200 `{removed: id}`, 404 when there is none.
 */
export function registerRemindersApi(gateway: Gateway, server: HttpServer): void {
  server.route("GET", "/api/reminders", async (_req, res) => {
    sendJson(res, 200, await gateway.reminders.report());
  });
  server.route("POST", "/api/reminders", async (req, res) => {
    const body = parseBody(await req.body());
    if (typeof body === "string") {
      sendJson(res, 400, { error: "bad-request", message: body });
      return;
    }
    const added = await gateway.reminders.add({
      ...body,
      setBy: { authority: "owner", channel: "api", senderId: "owner" },
    });
    if (typeof added === "string") sendJson(res, 400, { error: "bad-request", message: added });
    else sendJson(res, 201, added);
  });
  server.route("DELETE", "/api/reminders/:id", async (req, res) => {
    const id = req.params.id ?? "";
    if (await gateway.reminders.remove(id)) sendJson(res, 200, { removed: id });
    else sendJson(res, 404, { error: "not-found", message: `no reminder "${id}"` });
  });
}

function parseBody(text: string): { when: string; text: string; session?: string } | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "the body must be JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return "the body must be a JSON object";
  const b = body as Record<string, unknown>;
  if (typeof b.when !== "string" || b.when.trim() === "") return "when must be a non-empty string";
  if (typeof b.text !== "string" || b.text.trim() === "") return "text must be a non-empty string";
  if (b.session !== undefined) {
    if (typeof b.session !== "string") return "session must be a string";
    const bad = whyInvalidSessionKey(b.session);
    if (bad !== undefined) return `session: ${bad}`;
    return { when: b.when, text: b.text, session: b.session };
  }
  return { when: b.when, text: b.text };
}
