import { readdir, readlink, stat } from "node:fs/promises";
import { join } from "node:path";
import { E2eState, type Json } from "../e2e/harness.js";
import { markerReply } from "../fakes/openai-server.js";
import type { HookSpec } from "./traffic.js";

/** The hooks of every fault scenario: one with its own token and session, one into the primary session. */
export const HOOKS = {
  ci: { name: "ci", token: "ci-token-123456", sessionKey: "hooks:ci" },
  backup: { name: "backup", sessionKey: "main" },
} satisfies Record<string, HookSpec>;

/**
 * A state dir for a fault scenario: the e2e harness's config plus the two hooks, and the fake model answering
 * with `markerReply` (echo of every message it answers; `[[bash:…]]`, `[[slow:N]]`, `[[hang]]`).
 */
export async function faultState(options: { config?: Json; dir?: string } = {}): Promise<E2eState> {
  const state = await E2eState.create({
    ...(options.dir ? { dir: options.dir } : {}),
    config: {
      webhooks: {
        ci: { session: HOOKS.ci.sessionKey, token: HOOKS.ci.token },
        backup: {},
      },
      ...(options.config ?? {}),
    },
  });
  state.fake.setDefault(markerReply);
  return state;
}

export function sessionsDir(state: E2eState): string {
  return join(state.dir, "sessions");
}

export function journalPath(state: E2eState): string {
  return join(state.dir, "journal", "inbound.jsonl");
}

/** A file a process holds open under the journal directory, as `/proc/<pid>/fd` shows it. */
export interface OpenJournalFile {
  fd: string;
  target: string;
  /** The path was unlinked or replaced since: the process writes into a file nobody will read. */
  replaced: boolean;
}

/**
 * The files under `<state>/journal/` that process `pid` holds open (Linux `/proc`). A held file is `replaced`
 * when the kernel marks it deleted, or when the path now names another inode than the one held.
 */
export async function openJournalFiles(pid: number, state: E2eState): Promise<OpenJournalFile[]> {
  const dir = join(state.dir, "journal");
  const fdDir = `/proc/${pid}/fd`;
  const out: OpenJournalFile[] = [];
  for (const fd of await readdir(fdDir).catch(() => [] as string[])) {
    const target = await readlink(join(fdDir, fd)).catch(() => "");
    if (!target.startsWith(`${dir}/`)) continue;
    const deleted = target.endsWith(" (deleted)");
    let replaced = deleted;
    if (!deleted) {
      const [held, current] = await Promise.all([
        stat(join(fdDir, fd)).catch(() => undefined),
        stat(target).catch(() => undefined),
      ]);
      replaced = !held || !current || held.ino !== current.ino;
    }
    out.push({ fd, target, replaced });
  }
  return out;
}
