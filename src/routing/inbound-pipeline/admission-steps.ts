import type { Authority, AuthorizeResult, InboundMessage } from "../../plugin-api/types.js";
import { classifyAuthority } from "../../runtime/authority/authority.js";
import { whyInvalidSessionKey } from "../../sessions/session-key-rules.js";
import type { AdmissionDeps, Step } from "./types.js";

/**
 * The admission steps, in order: dedupe -> allow -> session key -> journal. They decide what `receive`
 * answers; only a message that passes all four is written to the journal (a denied sender leaves no record,
 * so a restart can never answer it).
 */

/** A `(channel, messageId)` seen before (now, being written, or in an earlier run) is a duplicate. */
export function dedupeStep(deps: Pick<AdmissionDeps, "isDuplicate">): Step {
  return async (ctx, next) => {
    if (deps.isDuplicate(ctx.message)) {
      ctx.result = { status: "duplicate" };
      return;
    }
    await next();
  };
}

/**
 * The authority a message is accepted with (`classifyAuthority`, runtime/authority/authority.ts).
 */
export function authorityOf(
  message: Pick<InboundMessage, "automated">,
  local: boolean,
  verdict?: AuthorizeResult,
): Authority {
  return classifyAuthority({ message, local, ...(verdict ? { verdict } : {}) });
}

/**
 * The transport of the message's channel decides whether its sender may talk to the agent, and with what
 * authority (set on the message, replacing what the plugin put there); local input passes. Internal input (the
 * core vouches for it) passes with the authority it was given; on any other input `internal` is removed.
 */
export function allowStep(deps: Pick<AdmissionDeps, "inputTransport" | "logDenied">): Step {
  return async (ctx, next) => {
    if (!ctx.internal && ctx.message.internal !== undefined) {
      const { internal: _removed, ...message } = ctx.message;
      ctx.message = message;
    }
    if (ctx.internal) {
      if (ctx.message.authority === undefined || ctx.message.internal === undefined)
        throw new Error("internal input carries its authority and kind");
    } else if (ctx.local) ctx.message = { ...ctx.message, authority: authorityOf(ctx.message, true) };
    else {
      const transport = deps.inputTransport(ctx.message.channel);
      if (!transport) {
        ctx.result = { status: "denied", reason: `no running transport "${ctx.message.channel}"` };
        return;
      }
      const verdict = transport.authorize(ctx.message);
      if (!verdict.allowed) {
        deps.logDenied(ctx.message, verdict.reason);
        ctx.result = { status: "denied", reason: verdict.reason };
        return;
      }
      ctx.message = { ...ctx.message, authority: authorityOf(ctx.message, false, verdict) };
    }
    await next();
  };
}

/** The session key the message routes to; a key that must not be stored (too long, control characters) is refused. */
export function sessionKeyStep(deps: Pick<AdmissionDeps, "sessionKeyFor">): Step {
  return async (ctx, next) => {
    const key = deps.sessionKeyFor(ctx.message);
    const why = whyInvalidSessionKey(key);
    if (why !== undefined) {
      ctx.result = { status: "denied", reason: `session key refused: ${why}` };
      return;
    }
    ctx.sessionKey = key;
    await next();
  };
}

/** Writes the message to the journal (fsync'd) before anything acknowledges it; then the dispatch steps run. */
export function journalStep(deps: Pick<AdmissionDeps, "accept">): Step {
  return async (ctx, next) => {
    const sessionKey = ctx.sessionKey;
    if (sessionKey === undefined) throw new Error("journalStep runs after sessionKeyStep");
    const { item, result } = await deps.accept({ ...ctx, sessionKey });
    ctx.item = item;
    ctx.result = result;
    await next();
  };
}
