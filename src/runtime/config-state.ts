/**
 * What the running gateway knows about its config file, for `/status`, `GET /api/status` (`clawdis status`) and
 * `clawdis doctor`: which file, a digest of the text it runs on, and the last edit it could not take (refused,
 * the file deleted, a gateway restart that did not start). The config reloader writes it; one per gateway.
 */

/** What `GET /api/status` says under `config`. */
export interface ConfigStatus {
  /** The config file the gateway loaded (whether or not it exists). */
  path: string;
  /** sha256 (hex) of the file text the gateway runs on; null: not known yet, or running on defaults (no file). */
  sha256: string | null;
  /** When that text was applied (the start, or the last good save). */
  appliedAt: number;
  /** The last edit, refused: the gateway runs on the previous config. Cleared by a good save. */
  rejected?: { at: number; ageMs: number; error: string; summary: string };
  /** The file is gone: the gateway runs on the last good config. Cleared when it is back. */
  deleted?: { at: number; ageMs: number };
}

/** `config` of a gateway's `GET /api/status` answer, when it has the shape of a ConfigStatus; else undefined. */
export function readConfigStatus(value: unknown): ConfigStatus | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.path !== "string" || typeof v.appliedAt !== "number") return undefined;
  if (v.sha256 !== null && typeof v.sha256 !== "string") return undefined;
  const status: ConfigStatus = { path: v.path, sha256: v.sha256, appliedAt: v.appliedAt };
  const r = v.rejected as Record<string, unknown> | undefined;
  if (r && typeof r.at === "number" && typeof r.ageMs === "number" && typeof r.error === "string") {
    status.rejected = {
      at: r.at,
      ageMs: r.ageMs,
      error: r.error,
      summary: typeof r.summary === "string" ? r.summary : summarizeConfigError(r.error),
    };
  }
  const d = v.deleted as Record<string, unknown> | undefined;
  if (d && typeof d.at === "number" && typeof d.ageMs === "number")
    status.deleted = { at: d.at, ageMs: d.ageMs };
  return status;
}

/** The one-line form of a config error: its problem lines without the "invalid config <path>:" head. */
export function summarizeConfigError(message: string): string {
  const lines = message.split("\n");
  const head = lines[0] ?? "";
  if (/^invalid config .*:$/.test(head) && lines.length > 1) {
    return lines
      .slice(1)
      .map((line) => line.trim())
      .filter((line) => line.length > 0)
      .join("; ");
  }
  return head;
}

export class ConfigState {
  private sha: string | null = null;
  private appliedAt: number;
  private rejection: { at: number; error: string } | undefined;
  private deletion: { at: number } | undefined;

  constructor(
    readonly path: string,
    startedAt: number,
  ) {
    this.appliedAt = startedAt;
  }

  /** The gateway runs on this text now (null: no file, the defaults). */
  applied(sha256: string | null, at: number): void {
    this.sha = sha256;
    this.appliedAt = at;
    this.rejection = undefined;
    this.deletion = undefined;
  }

  /** What the gateway started on, when it is found to be the file's text (nothing else changes). */
  confirmed(sha256: string | null): void {
    this.sha = sha256;
  }

  rejected(error: string, at: number): void {
    this.rejection = { at, error };
    this.deletion = undefined;
  }

  deleted(at: number): void {
    this.deletion ??= { at };
  }

  get isDeleted(): boolean {
    return this.deletion !== undefined;
  }

  get isRejected(): boolean {
    return this.rejection !== undefined;
  }

  snapshot(now: number): ConfigStatus {
    const status: ConfigStatus = { path: this.path, sha256: this.sha, appliedAt: this.appliedAt };
    if (this.rejection) {
      const { at, error } = this.rejection;
      status.rejected = { at, ageMs: now - at, error, summary: summarizeConfigError(error) };
    }
    if (this.deletion) status.deleted = { at: this.deletion.at, ageMs: now - this.deletion.at };
    return status;
  }
}
