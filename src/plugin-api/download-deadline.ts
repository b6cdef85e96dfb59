/**
 * The deadline every inbound media download keeps (Telegram's files, WhatsApp's media): a total time, and a
 * minimum rate over each window, so a server that trickles bytes (which no socket timeout notices) fails that one
 * file in bounded time instead of holding the message — and, on a serial path, everyone after it.
 */

/** What one download must keep. */
export interface DownloadLimits {
  /** The whole download (request and body) must end within this. */
  totalMs: number;
  /** The rate is judged over windows this long, from the start. */
  windowMs: number;
  /** Fewer bytes than this in a whole window: too slow. */
  minBytesPerWindow: number;
}

/** The defaults: 120 s in all, and at least 4 KB/s over every 10 s (a stall of 10 s fails). */
export const DEFAULT_DOWNLOAD_LIMITS: DownloadLimits = {
  totalMs: 120_000,
  windowMs: 10_000,
  minBytesPerWindow: 40 * 1024,
};

/** The limits with the total set from a config value in seconds (the window and rate stay the defaults). */
export function downloadLimits(timeoutSeconds: number): DownloadLimits {
  return { ...DEFAULT_DOWNLOAD_LIMITS, totalMs: Math.round(timeoutSeconds * 1000) };
}

/** Where the watchdog gets its timers: `setTimeout` by default, a manual clock in tests. */
export interface DownloadTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemTimers: DownloadTimers = {
  setTimeout: (fn, ms) => {
    const handle = setTimeout(fn, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Pure: whether a download may go on, judged at a check. `elapsedMs` since it began; `windowBytes` received in
 * the window that just ended, `windowMs` long (a window shorter than `limits.windowMs` is not judged for rate).
 * Returns undefined to go on, or why it timed out (for the model's note: "timed out (…)").
 */
export function downloadVerdict(
  check: { elapsedMs: number; windowMs: number; windowBytes: number },
  limits: DownloadLimits,
): string | undefined {
  if (check.elapsedMs >= limits.totalMs) return `not done within ${formatSeconds(limits.totalMs)}`;
  if (check.windowMs >= limits.windowMs && check.windowBytes < limits.minBytesPerWindow) {
    const rate = limits.minBytesPerWindow / 1024 / (limits.windowMs / 1000);
    return `slower than ${Math.round(rate * 10) / 10} KB/s for ${formatSeconds(limits.windowMs)}`;
  }
  return undefined;
}

/** A running watchdog: feed it bytes, end it when the download ends; `signal` aborts when it timed out. */
export interface DownloadWatch {
  /** Aborted (with the reason as an Error) when the download broke the limits. */
  readonly signal: AbortSignal;
  /** Why it timed out; undefined while it has not. */
  readonly reason: string | undefined;
  progress(bytes: number): void;
  end(): void;
}

/**
 * Starts the watchdog for one download: a check at the end of every window and at the total deadline (time is
 * counted by the timers alone, so a manual clock drives it whole). Effects: its timers and its signal.
 */
export function watchDownload(limits: DownloadLimits, timers: DownloadTimers = systemTimers): DownloadWatch {
  const controller = new AbortController();
  let elapsed = 0;
  let windowBytes = 0;
  let reason: string | undefined;
  let handle: unknown;
  const schedule = () => {
    const step = Math.max(0, Math.min(limits.windowMs, limits.totalMs - elapsed));
    handle = timers.setTimeout(() => {
      elapsed += step;
      const verdict = downloadVerdict({ elapsedMs: elapsed, windowMs: step, windowBytes }, limits);
      windowBytes = 0;
      if (verdict === undefined) return schedule();
      reason = verdict;
      controller.abort(new Error(`timed out (${verdict})`));
    }, step);
  };
  schedule();
  return {
    signal: controller.signal,
    get reason() {
      return reason;
    },
    progress: (bytes) => {
      windowBytes += bytes;
    },
    end: () => timers.clearTimeout(handle),
  };
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}
