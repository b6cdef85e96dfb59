import type { Gateway } from "../gateway.js";
import { configuredLimits } from "../runtime/session-upkeep.js";
import type { CleanupAction } from "../sessions/session-cleanup.js";
import type { HttpServer } from "./http-server.js";
import { sendJson } from "./http-server.js";

/**
 * `POST /api/sessions/cleanup` `{action?: "dry-run"|"archive"|"purge", limits?: {pruneAfterDays?, maxEntries?,
 * maxDiskMb?}}` (docs/http-api.md): what `clawdis sessions cleanup` asks the running gateway, so that the process
 * that knows which sessions are in use does the pruning. 200 with the report (session-cleanup.ts), 400 for a body
 * that is not one. Without `limits`, the configured `maintenance` (else its defaults) applies.
 */
export function registerSessionsCleanupApi(gateway: Gateway, server: HttpServer): void {
  server.route("POST", "/api/sessions/cleanup", async (req, res) => {
    const body = parseBody(await req.body());
    if (typeof body === "string") {
      sendJson(res, 400, { error: "bad-request", message: body });
      return;
    }
    // The turns that ended have their store update written: the ages planned on are the real ones.
    await gateway.turnsRecorded();
    const limits = body.limits ?? configuredLimits(gateway.config.inbound.reply.session.maintenance);
    sendJson(res, 200, await gateway.upkeep.cleanup(body.action, limits));
  });
}

type Limits = { pruneAfterDays?: number; maxEntries?: number; maxDiskMb?: number };

function parseBody(text: string): { action: CleanupAction; limits?: Limits } | string {
  let body: unknown;
  try {
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return "the body must be JSON";
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return "the body must be a JSON object";
  const b = body as Record<string, unknown>;
  const action = b.action ?? "dry-run";
  if (action !== "dry-run" && action !== "archive" && action !== "purge")
    return 'action must be "dry-run", "archive" or "purge"';
  if (b.limits === undefined) return { action };
  const raw = b.limits as Record<string, unknown>;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "limits must be an object";
  const limits: Limits = {};
  for (const name of ["pruneAfterDays", "maxEntries", "maxDiskMb"] as const) {
    const value = raw[name];
    if (value === undefined) continue;
    if (typeof value !== "number" || !(value > 0)) return `limits.${name} must be a positive number`;
    limits[name] = value;
  }
  return { action, limits };
}
