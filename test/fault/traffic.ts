import { randomUUID } from "node:crypto";
import { EventStream, NotAStreamError } from "../e2e/event-stream.js";
import type { ClawdisProcess, E2eState, GatewayProcess } from "../e2e/harness.js";
import type { FakeOpenAI, FakeRequest } from "../fakes/openai-server.js";
import type { Ledger, SentMessage } from "./ledger.js";

/**
 * The three ways a scenario hands in messages, each recording its acknowledgement in the ledger:
 * `POST /api/agent` as a stream (the `accepted` event), a webhook (its 202) and `clawdis agent -m` (its answer).
 * Every wait ends on an event (an event of the stream, an HTTP answer, a request at the fake model, a process
 * exit); the deadlines only stop a client that would otherwise wait forever on a wedged gateway, and what it
 * was owed is then counted by the ledger.
 */

/** How one send ended, from the sender's side ("accepted": acknowledged, and the sender did not wait on). */
export type SendResult = "answered" | "accepted" | "refused" | "broken" | "late";

/** A hook of the scenario's config: `webhooks.<name>`. */
export interface HookSpec {
  name: string;
  /** The bearer token the hook takes (its own, or the gateway token). */
  token?: string;
  sessionKey: string;
}

/** How long one message may take before its client gives up (a wedged gateway; the ledger judges the rest). */
export const SEND_DEADLINE_MS = 20_000;

/** A deadline: `late` resolves after `ms` unless `clear()` was called (turns a hang into a result). */
export function deadline(ms: number): { late: Promise<"late">; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  return { late, clear: () => clearTimeout(timer) };
}

/**
 * One message through `POST /api/agent` (`Accept: text/event-stream`); acknowledged on `accepted`. Then waits for
 * `done` (its payloads go to `message.answer`), unless `waitDone` is false. `messageId` repeats an earlier send.
 */
export async function sendApi(
  gw: GatewayProcess,
  ledger: Ledger,
  message: SentMessage,
  options: { deadlineMs?: number; waitDone?: boolean; messageId?: string } = {},
): Promise<SendResult> {
  const deadlineMs = options.deadlineMs ?? SEND_DEADLINE_MS;
  let stream: EventStream;
  try {
    stream = await EventStream.postAgent(gw.url, gw.token, {
      message: message.text,
      session: message.sessionKey,
      channel: "api",
      messageId: options.messageId ?? randomUUID(),
    });
  } catch (error) {
    if (!(error instanceof NotAStreamError)) return "broken";
    message.answer = `${error.status} ${error.body.slice(0, 200)}`;
    return "refused";
  }
  const timer = deadline(deadlineMs);
  try {
    const accepted = await Promise.race([
      stream.waitFor((e) => e.type === "accepted", "accepted", deadlineMs).catch(() => undefined),
      timer.late,
    ]);
    if (accepted === "late" || accepted === undefined) return stream.isClosed ? "broken" : "late";
    ledger.ack(message, typeof accepted.data.journalId === "string" ? accepted.data.journalId : undefined);
    if (options.waitDone === false) return "accepted";
    const done = await Promise.race([
      stream
        .waitFor((e) => e.type === "done", "done", deadlineMs)
        .then(
          (event) => {
            const payloads = (event.data.payloads ?? []) as { text?: string }[];
            message.answer = payloads.map((p) => p.text ?? "").join("\n");
            return "answered" as const;
          },
          () => "broken" as const,
        ),
      timer.late,
    ]);
    return done;
  } finally {
    timer.clear();
    stream.close();
  }
}

/** Resolves with the `nth` (1-based) model request that carries a user message naming `marker`. */
export function requestNaming(fake: FakeOpenAI, marker: string, nth = 1): Promise<FakeRequest> {
  const names = (r: FakeRequest) =>
    r.body.messages.some(
      (m) => m.role === "user" && typeof m.content === "string" && m.content.includes(marker),
    );
  const found = fake.requests.filter(names);
  if (found.length >= nth) return Promise.resolve(found[nth - 1]!);
  let count = found.length;
  return new Promise((resolve) => {
    const onRequest = (request: FakeRequest) => {
      if (!names(request) || ++count < nth) return;
      fake.events.off("request", onRequest);
      resolve(request);
    };
    fake.events.on("request", onRequest);
  });
}

/**
 * One message through a webhook; acknowledged on 202. With `pace` (the default) the sender then waits for the
 * model request that carries the message (its turn began), the gateway's exit, or the deadline; without, it
 * returns "answered" at the 202.
 */
export async function sendHook(
  gw: GatewayProcess,
  ledger: Ledger,
  hook: HookSpec,
  message: SentMessage,
  fake: FakeOpenAI,
  options: { pace?: boolean; deadlineMs?: number; messageId?: string } = {},
): Promise<SendResult> {
  const answer = await postHook(gw, hook, message.text, options.messageId ?? randomUUID());
  if (answer === "broken") return "broken";
  if (answer.status !== 202) return "refused";
  const body = answer.body as { journalId?: string };
  ledger.ack(message, body.journalId);
  if (options.pace === false) return "accepted";
  const timer = deadline(options.deadlineMs ?? SEND_DEADLINE_MS);
  try {
    return await Promise.race([
      requestNaming(fake, message.marker).then(() => "answered" as const),
      gw.exited.then(() => "broken" as const),
      timer.late,
    ]);
  } finally {
    timer.clear();
  }
}

/** `POST /hooks/<name>` with a JSON body; "broken" when the connection failed. */
export async function postHook(
  gw: GatewayProcess,
  hook: HookSpec,
  text: string,
  messageId: string,
): Promise<{ status: number; body: unknown } | "broken"> {
  try {
    const res = await fetch(`${gw.url}/hooks/${hook.name}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${hook.token ?? gw.token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ text, messageId }),
    });
    const raw = await res.text();
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // Not JSON: keep the text.
    }
    return { status: res.status, body };
  } catch {
    return "broken";
  }
}

/** A `clawdis agent -m` run, as a cron job would start it. */
export interface CronRun {
  message: SentMessage;
  process: ClawdisProcess;
  /** "answered" (exit 0 with the reply naming the message), "failed" (any other exit), "hung" (killed at the deadline). */
  result: Promise<"answered" | "failed" | "hung">;
}

/** How long a `clawdis agent` may run (waiting for a starting or stalled gateway included) before it counts as hung. */
export const CLI_DEADLINE_MS = 45_000;

/** Starts `clawdis agent -m <text> --json [--session <key>]`; acknowledged when it prints the answer. */
export function spawnCron(
  state: E2eState,
  ledger: Ledger,
  message: SentMessage,
  deadlineMs = CLI_DEADLINE_MS,
): CronRun {
  const args = ["agent", "-m", message.text, "--json"];
  if (message.sessionKey !== "main") args.push("--session", message.sessionKey);
  const proc = state.spawn(args);
  proc.child.stdin?.end();
  const result = proc.waitForExit(deadlineMs).then(
    (exit) => {
      if (exit.code !== 0) return "failed" as const;
      try {
        const reply = JSON.parse(proc.stdout.text()) as { payloads?: { text?: string }[] };
        message.answer = (reply.payloads ?? []).map((p) => p.text ?? "").join("\n");
        const named = message.answer.includes(message.marker);
        if (named) ledger.ack(message);
        return named ? ("answered" as const) : ("failed" as const);
      } catch {
        return "failed" as const;
      }
    },
    () => "hung" as const,
  );
  return { message, process: proc, result };
}
