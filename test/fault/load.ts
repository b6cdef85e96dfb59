import type { GatewayProcess } from "../e2e/harness.js";
import type { FakeOpenAI } from "../fakes/openai-server.js";
import type { Ledger } from "./ledger.js";
import type { SeededRandom } from "./seeded-random.js";
import { type HookSpec, type SendResult, sendApi, sendHook } from "./traffic.js";

/** What a load loop sends: which sessions, and how often a message asks for a tool call or a slow stream. */
export interface LoadOptions {
  ledger: Ledger;
  random: SeededRandom;
  fake: FakeOpenAI;
  /** Session keys to pick from, one per message. */
  keys: string[];
  /** Share of messages that ask for a `bash` call (`[[bash:echo <id> >> tool-runs.txt]]`). */
  toolChance?: number;
  /** Share of messages streamed slowly (`[[slow:N]]`, N from `slowMs`). */
  slowChance?: number;
  slowMs?: [number, number];
  /** Runs before each message of this loop (a scenario's hook between turns, e.g. a transcript fault). */
  between?: (key: string) => Promise<void>;
}

/** The fake-model markers of one message, chosen from the loop's options. */
function extras(options: LoadOptions, id: string): string {
  const parts: string[] = [];
  if (options.random.chance(options.toolChance ?? 0)) parts.push(`[[bash:echo ${id} >> tool-runs.txt]]`);
  if (options.random.chance(options.slowChance ?? 0)) {
    const [min, max] = options.slowMs ?? [5, 20];
    parts.push(`[[slow:${options.random.int(min, max)}]]`);
  }
  return parts.join(" ");
}

/** Counts of one loop's sends by result. */
export type LoopCounts = Record<SendResult, number>;

function emptyCounts(): LoopCounts {
  return { answered: 0, accepted: 0, refused: 0, broken: 0, late: 0 };
}

/**
 * Sends API messages one after the other (each waits for its turn to end) while `keepGoing()` holds and the
 * gateway runs. A broken connection ends the loop (the gateway died).
 */
export async function apiLoop(
  gw: GatewayProcess,
  options: LoadOptions,
  keepGoing: () => boolean,
): Promise<LoopCounts> {
  const counts = emptyCounts();
  while (keepGoing() && gw.running) {
    const key = options.random.pick(options.keys);
    await options.between?.(key);
    if (!keepGoing() || !gw.running) break;
    const message = options.ledger.mint("api", key);
    const extra = extras(options, message.id);
    if (extra) message.text = `${message.text} ${extra}`;
    const result = await sendApi(gw, options.ledger, message);
    counts[result]++;
    // Refused (the gateway stops, or does not take this input), broken (it died) or late (wedged): stop sending.
    if (result !== "answered" && result !== "accepted") break;
  }
  return counts;
}

/** Sends webhooks one after the other, each paced on the start of its turn, while `keepGoing()` holds. */
export async function hookLoop(
  gw: GatewayProcess,
  options: LoadOptions,
  hooks: HookSpec[],
  keepGoing: () => boolean,
): Promise<LoopCounts> {
  const counts = emptyCounts();
  while (keepGoing() && gw.running) {
    const hook = options.random.pick(hooks);
    const message = options.ledger.mint("webhook", hook.sessionKey);
    const extra = extras({ ...options, toolChance: 0 }, message.id);
    if (extra) message.text = `${message.text} ${extra}`;
    const result = await sendHook(gw, options.ledger, hook, message, options.fake);
    counts[result]++;
    // Refused (the gateway stops, or does not take this input), broken (it died) or late (wedged): stop sending.
    if (result !== "answered" && result !== "accepted") break;
  }
  return counts;
}
