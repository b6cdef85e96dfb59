import { randomUUID } from "node:crypto";
import { mkdir, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describeError, isClawdisError } from "../core/errors.js";
import { stateDir } from "../core/paths.js";
import type { Gateway } from "../gateway.js";
import type { Attachment, GatewayEvent, InboundMessage, TurnOutcome } from "../plugin-api/types.js";
import { modelSetup } from "../runtime/model-source.js";
import { isTransientError } from "../runtime/transient-error.js";
import { recoverAnswer } from "./openai-recover.js";
import type { OpenAiAsk, OpenAiImage, OpenAiProblem } from "./openai-request.js";

/**
 * The turns of the OpenAI-compatible API: a request's input handed to the gateway as the owner's message (channel
 * `openai`), journaled before this resolves, and the turn's streamed text kept for whoever follows it. The turn
 * belongs to the gateway, not to the request: a client that goes away stops nothing, the reply lands in the
 * transcript and the web chat's events.
 *
 * `Idempotency-Key`: the key is the message's id (`idempotency:<key>`), so the journal's dedupe takes it once; a
 * retry while this gateway runs answers from the first attempt's turn (waiting for it while it still runs, its text
 * streamed again from the start). A key first used before this gateway started is answered from the session's
 * transcript (openai-recover.ts); it never runs twice.
 */

/** A started turn: what every answer to it (the first request, and each retry) reads. */
export interface OpenAiTurn {
  /** Random, shared by the first attempt and its retries: `chatcmpl-<base>`, `resp_<base>`. */
  base: string;
  /** Epoch seconds of the first attempt. */
  created: number;
  sessionKey: string;
  /** Calls `onDelta` with the turn's text streamed so far, then with each new piece; returns the unsubscribe. */
  follow(onDelta: (text: string) => void): () => void;
  done: Promise<TurnOutcome>;
}

/** How many idempotency keys are remembered (the oldest are forgotten first). */
const REMEMBERED_KEYS = 1000;
/** The longest `Idempotency-Key` taken. */
const MAX_KEY_LENGTH = 200;

const problem = (
  status: number,
  message: string,
  type: string,
  code: string | null,
  param: string | null = null,
): OpenAiProblem => ({ status, message, type, param, code });

export class OpenAiTurns {
  private readonly byKey = new Map<string, Promise<OpenAiTurn | OpenAiProblem>>();

  constructor(private readonly gateway: Gateway) {}

  /** Starts the turn `ask` asks for, or (same `idempotencyKey`) gives the one a first attempt started. */
  start(ask: OpenAiAsk, idempotencyKey: string | undefined): Promise<OpenAiTurn | OpenAiProblem> {
    if (idempotencyKey === undefined) return this.startNew(ask, randomUUID());
    if (idempotencyKey.length === 0 || idempotencyKey.length > MAX_KEY_LENGTH) {
      return Promise.resolve(
        problem(
          400,
          `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters`,
          "invalid_request_error",
          null,
          "Idempotency-Key",
        ),
      );
    }
    const known = this.byKey.get(idempotencyKey);
    if (known) return known;
    const started = this.startNew(ask, `idempotency:${idempotencyKey}`);
    this.byKey.set(idempotencyKey, started);
    if (this.byKey.size > REMEMBERED_KEYS) this.byKey.delete(this.byKey.keys().next().value as string);
    // A refusal took nothing: a retry tries afresh.
    void started.then((turn) => {
      if ("status" in turn && this.byKey.get(idempotencyKey) === started) this.byKey.delete(idempotencyKey);
    });
    return started;
  }

  private answerTaken(sessionKey: string, messageId: string): Promise<OpenAiTurn | OpenAiProblem> {
    return answerTakenFrom(this.gateway, sessionKey, messageId);
  }

  private async startNew(ask: OpenAiAsk, messageId: string): Promise<OpenAiTurn | OpenAiProblem> {
    const gateway = this.gateway;
    if (gateway.isStopping()) {
      return problem(
        503,
        "the gateway is stopping; try again after it restarts",
        "service_unavailable",
        "stopping",
      );
    }
    if (modelSetup(gateway.config.inbound.reply.agent, gateway.options.env).state === "missing") {
      return problem(
        503,
        "no model is configured on the gateway: set inbound.reply.agent.model (docs/configuration.md)",
        "service_unavailable",
        "no_model",
      );
    }
    const dedupe = { channel: "openai", messageId };
    // The images go where the gateway takes a message's files from (a retry already taken writes none).
    const images = gateway.journal.isDuplicate(dedupe)
      ? { attachments: [], files: [] }
      : imagePlan(ask.images, join(stateDir(gateway.options.env), "plugins", "openai", "inbox"), randomUUID);
    try {
      for (const file of images.files) {
        await mkdir(file.dir, { recursive: true, mode: 0o700 });
        await writeFile(file.path, Buffer.from(file.base64, "base64"), { mode: 0o600 });
      }
    } catch (error) {
      return refusal(error);
    }
    const message: InboundMessage = {
      channel: "openai",
      chatId: `openai:${randomUUID()}`,
      chatType: "direct",
      senderId: "local",
      senderName: "owner",
      messageId,
      text: ask.text,
      ...(images.attachments.length > 0 ? { attachments: images.attachments } : {}),
      receivedAt: gateway.clock.now(),
      // Under the owner's authority, with exactly these tools (src/runtime/tools-policy.ts).
      allowedTools: [...gateway.config.gateway.openai.tools],
      ...(ask.sessionKey !== undefined ? { sessionKey: ask.sessionKey } : {}),
    };
    const sessionKey = gateway.sessionKeyFor(message);
    const stream = new TurnText();
    // Subscribed before the message is handed in, so that no event of its turn is missed.
    const off = gateway.onEvent((event) => stream.take(event, sessionKey));
    let result: Awaited<ReturnType<Gateway["receive"]>>;
    try {
      result = await gateway.receive(message, { local: true });
    } catch (error) {
      off();
      await removeFiles(images.files);
      return refusal(error);
    }
    if (result.status !== "accepted") {
      off();
      await removeFiles(images.files);
      if (result.status === "denied") return problem(403, result.reason, "permission_error", "denied");
      return this.answerTaken(sessionKey, messageId);
    }
    stream.journalId = result.journalId;
    const done = result.done.finally(off);
    return {
      base: result.journalId.replace(/-/g, ""),
      created: Math.floor(message.receivedAt / 1000),
      sessionKey,
      follow: (onDelta) => stream.follow(onDelta),
      done,
    };
  }
}

/**
 * The answer to a message the journal took before (its `Idempotency-Key` came before this gateway started): read
 * from the transcript; 409 while its turn still runs (retryable) or when it is not there (a reset since).
 */
async function answerTakenFrom(
  gateway: Gateway,
  sessionKey: string,
  messageId: string,
): Promise<OpenAiTurn | OpenAiProblem> {
  const found = await recoverAnswer(gateway, sessionKey, messageId);
  if (found === "running") {
    return problem(
      409,
      "the request with this Idempotency-Key is still being answered (the gateway restarted meanwhile); retry later",
      "invalid_request_error",
      "idempotency_key_in_progress",
      "Idempotency-Key",
    );
  }
  if (found === undefined) {
    return problem(
      409,
      "this Idempotency-Key was used before and its reply is no longer in the session's current transcript",
      "invalid_request_error",
      "idempotency_key_reused",
      "Idempotency-Key",
    );
  }
  const text = found.outcome.payloads.map((p) => p.text).join("\n\n");
  return {
    base: found.journalId.replace(/-/g, ""),
    created: Math.floor(found.at / 1000),
    sessionKey,
    follow: (onDelta) => {
      if (text !== "") onDelta(text);
      return () => {};
    },
    done: Promise.resolve(found.outcome),
  };
}

/** A file to write before the message is handed in: `base64` decoded at `path` (in `dir`). */
interface ImageFile {
  dir: string;
  path: string;
  base64: string;
}

/**
 * The attachments of a message's images, and the files to write for them in `dir` (named by `newId`): a `data:`
 * URL's bytes become a file; a URL the gateway does not fetch is an attachment without a file, with a note saying
 * so. Pure.
 */
export function imagePlan(
  images: readonly OpenAiImage[],
  dir: string,
  newId: () => string,
): { attachments: Attachment[]; files: ImageFile[] } {
  const attachments: Attachment[] = [];
  const files: ImageFile[] = [];
  for (const image of images) {
    if ("url" in image) {
      attachments.push({
        kind: "image",
        note: `an image URL the gateway does not fetch (${image.url.slice(0, 200)}); send images as data: URLs`,
      });
      continue;
    }
    const subtype = image.mimeType.slice("image/".length).replace(/[^a-z0-9]/gi, "");
    const fileName = `image-${newId()}.${subtype === "jpeg" ? "jpg" : subtype || "img"}`;
    const path = join(dir, fileName);
    files.push({ dir, path, base64: image.base64 });
    attachments.push({
      kind: "image",
      path,
      mimeType: image.mimeType,
      fileName,
      sizeBytes: Buffer.byteLength(image.base64, "base64"),
    });
  }
  return { attachments, files };
}

async function removeFiles(files: readonly ImageFile[]): Promise<void> {
  await Promise.all(files.map((file) => unlink(file.path).catch(() => {})));
}

/** Why a message was not taken (nothing is recorded): 413, 429 for a full journal, 503 for a passing failure. */
function refusal(error: unknown): OpenAiProblem {
  if (isClawdisError(error, "MESSAGE_TOO_LARGE"))
    return problem(413, describeError(error), "invalid_request_error", "message_too_large");
  if (isClawdisError(error, "STATE_BUSY"))
    return problem(429, describeError(error), "rate_limit_exceeded", "too_many_waiting");
  if (isTransientError(error)) {
    return problem(
      503,
      `the message was not taken (${describeError(error)}); retry later`,
      "service_unavailable",
      "unavailable",
    );
  }
  throw error;
}

/** The text one turn streams: its `delta` events, found by the journal record of the message that started it. */
class TurnText {
  journalId: string | undefined;
  private readonly early: GatewayEvent[] = [];
  private turnId: string | undefined;
  private readonly pieces: string[] = [];
  private readonly followers = new Set<(text: string) => void>();

  take(event: GatewayEvent, sessionKey: string): void {
    if (event.sessionKey !== sessionKey) return;
    if (this.journalId === undefined) {
      this.early.push(event);
      return;
    }
    for (const held of this.early.splice(0)) this.apply(held);
    this.apply(event);
  }

  private apply(event: GatewayEvent): void {
    // Only the turn this message started (or joined).
    if (event.type === "turn-start" && event.journalId === this.journalId) this.turnId = event.turnId;
    if (event.type === "message" && event.journalId === this.journalId && event.turnId)
      this.turnId = event.turnId;
    if (this.turnId === undefined || event.type !== "delta" || event.turnId !== this.turnId) return;
    this.pieces.push(event.text);
    for (const follower of this.followers) follower(event.text);
  }

  follow(onDelta: (text: string) => void): () => void {
    for (const held of this.early.splice(0)) this.apply(held);
    const sofar = this.pieces.join("");
    if (sofar.length > 0) onDelta(sofar);
    this.followers.add(onDelta);
    return () => this.followers.delete(onDelta);
  }
}
