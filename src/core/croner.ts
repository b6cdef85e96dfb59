import { createRequire } from "node:module";
import type { Cron as CronClass, CronOptions } from "croner";

/** A croner job (the type only: the module itself is required by `pausedCron`). */
export type Cron = CronClass;

/** croner, required at its first use: the gateway's start needs no cron (it costs ~3 ms to load). */
let loaded: typeof import("croner") | undefined;

/** A paused croner job for `pattern` (never runs by itself: only its `nextRun` is read). */
export function pausedCron(pattern: string, options: Omit<CronOptions, "paused">): Cron {
  loaded ??= createRequire(import.meta.url)("croner") as typeof import("croner");
  return new loaded.Cron(pattern, { ...options, paused: true });
}
