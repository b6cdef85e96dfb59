/** Structured, levelled logging to stderr. stdout is reserved for data (`--json`). */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger whose lines carry `[scope]`. */
  child(scope: string): Logger;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogLine {
  level: LogLevel;
  scope: string | undefined;
  message: string;
  fields: LogFields | undefined;
}

export type LogSink = (line: LogLine) => void;

function formatFields(fields: LogFields | undefined): string {
  if (!fields) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = typeof value === "string" ? value : JSON.stringify(value);
    parts.push(`${key}=${text !== undefined && /\s/.test(text) ? JSON.stringify(text) : text}`);
  }
  return parts.length > 0 ? ` ${parts.join(" ")}` : "";
}

/** Renders a log line as `2026-11-30T06:40:00.000Z WARN [store] message key=value`. */
export function formatLogLine(line: LogLine, at: Date = new Date()): string {
  const scope = line.scope ? ` [${line.scope}]` : "";
  return `${at.toISOString()} ${line.level.toUpperCase()}${scope} ${line.message}${formatFields(line.fields)}`;
}

/** Lines of the default sink not written yet (`flushLogLines`). */
let queued = "";
let flushQueued = false;

/**
 * Writes the lines the default sink queued, now, in order. Runs by itself after the event loop's current phase
 * (an unref'd immediate), before any warn or error line, before other output to stderr (cli/io.ts) and at exit.
 */
export function flushLogLines(): void {
  if (queued === "") return;
  const text = queued;
  queued = "";
  process.stderr.write(text);
}

process.on("exit", flushLogLines);

/**
 * The default sink: stderr, the lines of one turn of the event loop in one write (a gateway ending a hundred turns
 * at once makes one syscall, not a hundred). Warn and error lines are written at once, after what waited, so a
 * line that explains a crash is never held back.
 */
function stderrSink(line: LogLine): void {
  queued += `${formatLogLine(line)}\n`;
  if (line.level === "warn" || line.level === "error") {
    flushLogLines();
    return;
  }
  if (flushQueued) return;
  flushQueued = true;
  setImmediate(() => {
    flushQueued = false;
    flushLogLines();
  }).unref();
}

/** The level of each logger made by createLogger, shared with its children (see setLogLevel). */
const levels = new WeakMap<Logger, { min: number }>();

export function createLogger(options: { level?: LogLevel; sink?: LogSink; scope?: string } = {}): Logger {
  const level = { min: ORDER[options.level ?? "info"] };
  const sink: LogSink = options.sink ?? stderrSink;
  const make = (scope: string | undefined): Logger => {
    const emit = (lineLevel: LogLevel, message: string, fields?: LogFields) => {
      if (ORDER[lineLevel] >= level.min) sink({ level: lineLevel, scope, message, fields });
    };
    const logger: Logger = {
      debug: (m, f) => emit("debug", m, f),
      info: (m, f) => emit("info", m, f),
      warn: (m, f) => emit("warn", m, f),
      error: (m, f) => emit("error", m, f),
      child: (s) => make(scope ? `${scope}:${s}` : s),
    };
    levels.set(logger, level);
    return logger;
  };
  return make(options.scope);
}

/**
 * Changes the level of a logger made by createLogger, for it and every logger made from it (`logging.level`
 * changed while the gateway runs). False, and nothing changes, for a logger made otherwise.
 */
export function setLogLevel(logger: Logger, level: LogLevel): boolean {
  const shared = levels.get(logger);
  if (!shared) return false;
  shared.min = ORDER[level];
  return true;
}

/** A logger that keeps its lines in memory, for tests. */
export function createMemoryLogger(level: LogLevel = "debug"): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { logger: createLogger({ level, sink: (line) => lines.push(line) }), lines };
}

/** Discards everything. */
export const silentLogger: Logger = createLogger({ sink: () => {} });
