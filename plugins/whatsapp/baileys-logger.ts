import type { ILogger } from "@whiskeysockets/baileys/lib/Utils/logger.js";
import type { PluginContext } from "../../src/plugin-api/index.js";

type Logger = PluginContext["logger"];

/**
 * Baileys' pino-style logger on the plugin's logger. Baileys reports every hiccup it recovers from itself (a
 * dropped socket, a failed decrypt it retries) as warn or error; the transport logs its own decisions about
 * them, so Baileys' lines go to debug, with the message first.
 */
export function baileysLogger(logger: Logger): ILogger {
  const line = (obj: unknown, msg?: string) => {
    const text = msg ?? (typeof obj === "string" ? obj : "baileys");
    const fields = typeof obj === "object" && obj !== null ? { detail: summarize(obj) } : undefined;
    logger.debug(`baileys: ${text}`, fields);
  };
  const self: ILogger = {
    level: "debug",
    child: () => self,
    trace: () => {},
    debug: line,
    info: line,
    warn: line,
    error: line,
  };
  return self;
}

function summarize(obj: object): string {
  try {
    const text = JSON.stringify(obj);
    return text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(obj);
  }
}

/** A Baileys logger that drops everything (the login flow says what matters itself). */
export const silentBaileysLogger: ILogger = {
  level: "silent",
  child: () => silentBaileysLogger,
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
