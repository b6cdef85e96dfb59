import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { buildSessionsReport } from "../cli/sessions-report.js";
import { describeError, isClawdisError } from "../core/errors.js";
import type { Gateway } from "../gateway.js";
import { outcomeBody } from "../plugin-api/outcome-body.js";
import type { GatewayEvent, HttpRequest, InboundMessage } from "../plugin-api/types.js";
import { isTransientError } from "../runtime/transient-error.js";
import { whyInvalidSessionKey } from "../sessions/session-key-rules.js";
import { readTranscriptPage } from "../sessions/transcript-page.js";
import type { StoredChatMessage, TranscriptEntry } from "../sessions/types.js";
import { parseOutputFilter, passesFilter } from "./event-filter.js";
import type { HttpServer } from "./http-server.js";
import { sendJson } from "./http-server.js";
import { registerOpenAiApi } from "./openai-api.js";
import { registerRemindersApi } from "./reminders-api.js";
import { registerSearchApi } from "./search-api.js";
import { registerSessionsCleanupApi } from "./sessions-cleanup-api.js";
import { startSse } from "./sse.js";

/** The gateway's own API (docs/http-api.md). Every route needs the gateway token. */
export function registerApi(gateway: Gateway, server: HttpServer): void {
  server.route("POST", "/api/agent", (req, res) => postAgent(gateway, req, res));
  server.route("GET", "/api/status", (_req, res) => sendJson(res, 200, statusBody(gateway)));
  // `clawdis gateway stop`: answered first, then the gateway stops as on SIGTERM (the caller waits for the exit).
  server.route("POST", "/api/stop", (_req, res) => {
    sendJson(res, 202, { status: "stopping", pid: process.pid });
    gateway.requestStop({ why: "clawdis gateway stop" });
  });
  // An in-process restart on the config file as it is now (docs/runtime.md, Stopping and restarting).
  server.route("POST", "/api/restart", async (_req, res) => {
    const answer = await gateway.requestRestart("requested over the API");
    if (answer.accepted) sendJson(res, 202, { status: "restarting", pid: process.pid });
    else sendJson(res, answer.status, { error: "not-restarted", message: answer.error });
  });
  server.route("GET", "/api/sessions", async (req, res) => {
    const active = req.query.get("active");
    const activeMinutes = active === null ? null : Number(active);
    if (activeMinutes !== null && !(Number.isFinite(activeMinutes) && activeMinutes > 0)) {
      sendJson(res, 400, { error: "bad-request", message: "active must be a positive number of minutes" });
      return;
    }
    // The reply goes out before its turn's store update: what is listed includes the turns that ended.
    await gateway.turnsRecorded();
    const map = await gateway.store.load();
    // A loaded session's row says its phase (session/phase.ts).
    const phaseOf = (key: string) => gateway.sessions.phaseOf(key);
    sendJson(
      res,
      200,
      buildSessionsReport(map, gateway.store.path, gateway.clock.now(), activeMinutes, phaseOf),
    );
  });
  server.route("GET", "/api/history", async (req, res) => {
    const key = req.query.get("session") ?? gateway.mainKey;
    const badKey = whyInvalidSessionKey(key);
    if (badKey !== undefined) {
      sendJson(res, 400, { error: "bad-request", message: `session: ${badKey}` });
      return;
    }
    const query = parseHistoryQuery(req.query.get("limit"), req.query.get("before"));
    if (typeof query === "string") {
      sendJson(res, 400, { error: "bad-request", message: query });
      return;
    }
    const { status, body } = await historyBody(gateway, key, query);
    sendJson(res, status, body);
  });
  registerRemindersApi(gateway, server);
  registerSearchApi(gateway, server);
  registerOpenAiApi(gateway, server);
  registerSessionsCleanupApi(gateway, server);
  server.route("GET", "/api/events", (req, res) => {
    const session = req.query.get("session");
    const filter = parseOutputFilter(req.query.get("filter"));
    if (typeof filter === "string") {
      sendJson(res, 400, { error: "bad-request", message: filter });
      return;
    }
    const sse = startSse(res);
    // A subscriber that goes away is dropped; the session never waits for one.
    const off = gateway.onEvent((event) => {
      if ((session === null || event.sessionKey === session) && passesFilter(event, filter))
        sse.send(event.type, event);
    });
    res.on("close", off);
  });
}

export function statusBody(gateway: Gateway): Record<string, unknown> {
  const now = gateway.clock.now();
  return {
    version: gateway.options.version,
    pid: process.pid,
    startedAt: gateway.startedAt,
    uptimeMs: now - gateway.startedAt,
    /** The in-process restart that started this gateway: `{at, reason}`, or null. */
    restarted: gateway.restartInfo() ?? null,
    storePath: gateway.store.path,
    ...(gateway.options.configPath ? { configPath: gateway.options.configPath } : {}),
    /** The config file, a digest of the text it runs on, and an edit that did not take (clawdis status, doctor). */
    config: gateway.configState.snapshot(now),
    mainKey: gateway.mainKey,
    contextWindow: gateway.config.inbound.reply.agent.contextTokens,
    transports: gateway.host.states(),
    model: gateway.modelProbe.snapshot(),
    openJournalRecords: gateway.journal.openCount(),
    /** Replies waiting for a transport that is down, by channel. */
    parkedReplies: gateway.outbox.parked(),
    /** Tool calls that wait for a person's approval (docs/tools.md), oldest first. */
    approvals: gateway.approvals.pending().map((a) => ({
      sessionKey: a.sessionKey,
      tool: a.tool,
      what: a.what,
      channel: a.chat.channel,
      chatId: a.chat.chatId,
      askedAt: a.at,
      ageMs: now - a.at,
    })),
  };
}

/** `limit` when none is given, and the most one page holds (docs/http-api.md). */
const HISTORY_DEFAULT_LIMIT = 200;
const HISTORY_MAX_LIMIT = 2000;

interface HistoryQuery {
  limit: number;
  /** From a `before` cursor of an earlier page: `<sessionId>:<byte offset>`. */
  before?: { sessionId: string; offset: number };
}

/** `limit`: a whole number >= 1, capped at 2000; `before`: a cursor from an earlier page. A string is the problem. */
function parseHistoryQuery(limit: string | null, before: string | null): HistoryQuery | string {
  let n = HISTORY_DEFAULT_LIMIT;
  if (limit !== null) {
    if (!/^\d+$/.test(limit) || Number(limit) < 1) {
      return `limit must be a whole number from 1 to ${HISTORY_MAX_LIMIT}, got ${JSON.stringify(limit)}`;
    }
    n = Math.min(HISTORY_MAX_LIMIT, Number(limit));
  }
  if (before === null) return { limit: n };
  const match = /^(.+):(\d+)$/.exec(before);
  if (!match || !Number.isSafeInteger(Number(match[2]))) {
    return `before must be the "before" value of an earlier page, got ${JSON.stringify(before)}`;
  }
  return { limit: n, before: { sessionId: match[1] as string, offset: Number(match[2]) } };
}

/** The messages of a history page: every message entry but system prompts. */
function isHistoryMessage(entry: TranscriptEntry): boolean {
  if (entry.type !== "message") return false;
  const m = (entry as { message?: StoredChatMessage }).message;
  return m !== undefined && m.role !== "system";
}

/** Notes a `turn-failed` entry's message (its `journalId`) and why (`reason`, "the turn failed" without one). */
function noteFailed(failed: Map<string, string>, entry: TranscriptEntry): void {
  const { journalId, reason } = entry as { journalId?: unknown; reason?: unknown };
  if (typeof journalId !== "string" || failed.has(journalId)) return;
  failed.set(journalId, typeof reason === "string" && reason.length > 0 ? reason : "the turn failed");
}

/**
 * One page of a session's current transcript, newest last, read backwards from the end (or from `before`) so a
 * call costs what the page holds, never the whole file. `before` in the body continues with the older page.
 */
async function historyBody(
  gateway: Gateway,
  key: string,
  query: HistoryQuery,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const entry = await gateway.store.get(key);
  if (!entry) {
    return {
      status: 200,
      body: { sessionKey: key, sessionId: null, messages: [], badLines: 0, before: null },
    };
  }
  if (query.before && query.before.sessionId !== entry.sessionId) {
    const message = `the cursor is for session id ${query.before.sessionId}; ${key} is now ${entry.sessionId}: load the history again without before`;
    return { status: 409, body: { error: "stale-cursor", message } };
  }
  // The `turn-failed` entries met on the way (each written after the message it names): a person's message whose
  // turn failed is `unanswered`, with the reason.
  const failed = new Map<string, string>();
  const page = await readTranscriptPage(gateway.store.transcriptPath(entry.sessionId), {
    limit: query.limit,
    keep: (e) => {
      if (e.type === "turn-failed") noteFailed(failed, e);
      return isHistoryMessage(e);
    },
    ...(query.before ? { before: query.before.offset } : {}),
  });
  if (page.beforeProblem !== undefined) {
    return { status: 400, body: { error: "bad-request", message: `before: ${page.beforeProblem}` } };
  }
  const messages = page.entries.map((e) => {
    const m = (e as { message: StoredChatMessage }).message;
    const meta = (e as { meta?: Record<string, unknown> }).meta ?? {};
    return {
      id: e.id,
      ts: e.ts,
      role: m.role,
      text: m.content ?? "",
      ...(m.tool_calls
        ? {
            toolCalls: m.tool_calls.map((c) => ({
              id: c.id,
              name: c.function.name,
              arguments: c.function.arguments,
            })),
          }
        : {}),
      ...(m.tool_call_id ? { toolCallId: m.tool_call_id } : {}),
      ...(typeof meta.channel === "string" ? { channel: meta.channel } : {}),
      ...(typeof meta.chatId === "string" ? { chatId: meta.chatId } : {}),
      ...(m.role === "user" && typeof meta.journalId === "string" && failed.has(meta.journalId)
        ? { unanswered: failed.get(meta.journalId) }
        : {}),
    };
  });
  return {
    status: 200,
    body: {
      sessionKey: key,
      sessionId: entry.sessionId,
      messages,
      badLines: page.badLines.length,
      before: page.before === undefined ? null : `${entry.sessionId}:${page.before}`,
    },
  };
}

interface AgentBody {
  message: string;
  session?: string;
  channel?: string;
  chatId?: string;
  messageId?: string;
  senderName?: string;
}

function parseAgentBody(text: string): AgentBody | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "the body must be JSON";
  }
  if (typeof body !== "object" || body === null) return "the body must be a JSON object";
  const b = body as Record<string, unknown>;
  if (typeof b.message !== "string" || b.message.trim().length === 0)
    return "message must be a non-empty string";
  for (const field of ["session", "channel", "chatId", "messageId", "senderName"]) {
    if (b[field] !== undefined && typeof b[field] !== "string") return `${field} must be a string`;
  }
  return b as unknown as AgentBody;
}

async function postAgent(gateway: Gateway, req: HttpRequest, res: ServerResponse): Promise<void> {
  if (gateway.isStopping()) {
    sendJson(res, 503, {
      error: "stopping",
      message: "the gateway is stopping; try again after it restarts",
    });
    return;
  }
  const body = parseAgentBody(await req.body());
  if (typeof body === "string") {
    sendJson(res, 400, { error: "bad-request", message: body });
    return;
  }
  const channel = body.channel ?? "api";
  const message: InboundMessage = {
    channel,
    chatId: body.chatId ?? `${channel}:${randomUUID()}`,
    chatType: "direct",
    senderId: "local",
    senderName: body.senderName ?? "owner",
    messageId: body.messageId ?? randomUUID(),
    text: body.message,
    receivedAt: gateway.clock.now(),
    ...(body.session ? { sessionKey: body.session } : {}),
  };
  const wantsStream = String(req.headers.accept ?? "").includes("text/event-stream");
  const key = gateway.sessionKeyFor(message);
  // Subscribe before handing the message in, so that no event of this turn is missed.
  const buffered: GatewayEvent[] = [];
  let forward: ((event: GatewayEvent) => void) | undefined;
  const off = wantsStream
    ? gateway.onEvent((event) => {
        if (event.sessionKey !== key) return;
        if (forward) forward(event);
        else buffered.push(event);
      })
    : () => {};
  try {
    let result: Awaited<ReturnType<Gateway["receive"]>>;
    try {
      result = await gateway.receive(message, { local: true });
    } catch (error) {
      // Not accepted (nothing is recorded): a passing failure says "retry", a message too large says so.
      if (isClawdisError(error, "MESSAGE_TOO_LARGE")) {
        sendJson(res, 413, { error: "too-large", message: describeError(error) });
        return;
      }
      if (isTransientError(error)) {
        sendJson(res, 503, {
          error: "unavailable",
          message: `the message was not taken (${describeError(error)}); retry later with the same messageId`,
        });
        return;
      }
      throw error;
    }
    if (result.status === "duplicate") {
      sendJson(res, 409, { error: "duplicate", message: "this messageId was already received" });
      return;
    }
    if (result.status === "denied") {
      sendJson(res, 403, { error: "denied", message: result.reason });
      return;
    }
    if (!wantsStream) {
      sendJson(res, 200, outcomeBody(await result.done));
      return;
    }
    const sse = startSse(res);
    sse.send("accepted", { journalId: result.journalId, sessionKey: key });
    let turnId: string | undefined;
    forward = (event) => {
      // Only the turn this message started (or joined) is streamed.
      if (event.type === "turn-start" && event.journalId === result.journalId) turnId = event.turnId;
      if (event.type === "message" && event.journalId === result.journalId && event.turnId)
        turnId = event.turnId;
      if (turnId === undefined) return;
      if ("turnId" in event && event.turnId !== turnId) return;
      if (event.type === "delta") sse.send("delta", { text: event.text });
      else if (event.type === "tool-call") {
        sse.send("tool-call", { callId: event.callId, name: event.name, arguments: event.arguments });
      } else if (event.type === "tool-result") {
        sse.send("tool-result", {
          callId: event.callId,
          name: event.name,
          ok: event.ok,
          output: event.output,
        });
      }
    };
    for (const event of buffered.splice(0)) forward(event);
    const outcome = await result.done;
    sse.send("done", outcomeBody(outcome));
    sse.close();
  } finally {
    off();
  }
}
