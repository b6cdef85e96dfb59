/**
 * The one error type of clawdis. Every code is listed in docs/errors.md with what the user should do.
 * `throw` is for bugs and for start-up failures; expected runtime failures come back as values.
 */
export const ERROR_CODES = {
  CONFIG_INVALID: 2,
  CONFIG_SYNTAX: 2,
  USAGE: 2,
  STORE_CORRUPT: 1,
  STORE_LOCKED: 1,
  SESSION_ID_INVALID: 1,
  PLUGIN_INVALID: 1,
  PLUGIN_START_TIMEOUT: 1,
  PLUGIN_FAILED: 1,
  GATEWAY_UNREACHABLE: 1,
  GATEWAY_RUNNING: 1,
  STATE_BUSY: 1,
  MESSAGE_TOO_LARGE: 1,
  UNAUTHORIZED: 1,
  IO: 1,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ClawdisError extends Error {
  readonly code: ErrorCode;
  /** Process exit code when this error ends a CLI command: 2 for bad usage or config, else 1. */
  readonly exitCode: number;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ClawdisError";
    this.code = code;
    this.exitCode = ERROR_CODES[code];
  }
}

export function isClawdisError(error: unknown, code?: ErrorCode): error is ClawdisError {
  return error instanceof ClawdisError && (code === undefined || error.code === code);
}

/** A one-line description of any thrown value, for logs. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
