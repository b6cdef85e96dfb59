import { chmod, lstat, readdir } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { describeError } from "../core/errors.js";
import { folderWorkspaceFor, type SessionRoots } from "../sessions/session-paths.js";
import type { DoctorReport } from "./doctor-journal.js";
import { count } from "./plural.js";

/**
 * File modes: what clawdis keeps (transcripts, the store, the journal, the token, credentials, the config, which
 * may hold API keys) must not be readable by other local users. A file or folder is too open when its mode gives
 * any permission to the group or to others (wider than 0600 for a file, 0700 for a folder); `--fix` takes those
 * bits away and keeps the owner's (0644 -> 0600, 0755 -> 0700, an executable 0755 file -> 0700).
 */

/** Any permission for the group or for others. Pure. */
export function isTooOpen(mode: number): boolean {
  return (mode & 0o077) !== 0;
}

/** The mode with the group's and others' permissions removed (the owner's and the type bits kept). Pure. */
export function tightenedMode(mode: number): number {
  return mode & ~0o077 & 0o7777;
}

/** A mode as people write it: `0644`. */
export function octal(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

export interface WideEntry {
  path: string;
  kind: "file" | "folder";
  mode: number;
}

/** Where to look. `recursive: false` checks the path itself only (the workspace: its content is the agent's). */
export interface ModeRoot {
  path: string;
  recursive: boolean;
}

/**
 * Every file and folder under the roots (each path once) whose mode is too open. Symbolic links are neither
 * followed nor reported (their own mode means nothing); sockets and other special files are skipped; a
 * path in `skipContentOf` is checked itself, but not what is inside it. A root that does not exist is skipped.
 */
export async function findWideModes(roots: ModeRoot[], skipContentOf: string[] = []): Promise<WideEntry[]> {
  const seen = new Set<string>();
  const wide: WideEntry[] = [];
  const visit = async (path: string, recursive: boolean): Promise<void> => {
    if (seen.has(path)) return;
    seen.add(path);
    const info = await lstat(path).catch(() => undefined);
    if (!info) return;
    const kind = info.isDirectory() ? "folder" : info.isFile() ? "file" : undefined;
    if (kind === undefined) return;
    if (isTooOpen(info.mode)) wide.push({ path, kind, mode: info.mode & 0o7777 });
    if (kind !== "folder" || !recursive || skipContentOf.includes(path)) return;
    const names = await readdir(path).catch(() => [] as string[]);
    for (const name of names.sort()) await visit(join(path, name), true);
  };
  for (const root of roots) await visit(root.path, root.recursive);
  return wide;
}

const SHOWN = 10;

/** `a.jsonl (0644), b.jsonl (0664)`, at most SHOWN names, then `and N more`. */
function listNames(entries: WideEntry[], base: string): string {
  const names = entries
    .slice(0, SHOWN)
    .map((e) => `${relative(base, e.path) || basename(e.path)} (${octal(e.mode)})`);
  const more = entries.length > SHOWN ? `, and ${entries.length - SHOWN} more` : "";
  return `${names.join(", ")}${more}`;
}

/**
 * Reports (and with `fix`, tightens) the modes of the state directory and everything in it, the config file, and
 * the folders of sessions' files when they are elsewhere (`sessions`, session-paths.ts): the store's folder with
 * every transcript, and the agent's workspace (the primary session's) itself. What is inside a workspace, the
 * agent's own or a session folder's `workspace/`, is the agent's and left alone. One problem per folder that is too
 * open, and one per folder whose files are; `--fix` says what it changed. Skipped on Windows, where modes mean nothing.
 */
export async function checkModes(
  places: { stateDir: string; configFile: string; sessions: SessionRoots },
  fix: boolean,
  report: DoctorReport & { repaired(text: string): void },
  platform: NodeJS.Platform = process.platform,
): Promise<void> {
  if (platform === "win32") return;
  const { sessions } = places;
  const workspace = sessions.workspaceDir;
  const roots: ModeRoot[] = [
    { path: places.stateDir, recursive: true },
    { path: places.configFile, recursive: false },
    { path: sessions.storeDir, recursive: true },
    { path: workspace, recursive: false },
  ];
  // A workspace's content is the agent's: the agent's workspace and each session folder's `workspace/`.
  const sessionWorkspaces = (await readdir(sessions.storeDir).catch(() => [] as string[])).map((name) =>
    folderWorkspaceFor(sessions.storeDir, name),
  );
  const wide = await findWideModes(roots, [workspace, ...sessionWorkspaces]);
  if (wide.length === 0) {
    report.ok(`file modes: nothing in ${places.stateDir} can be read by other local users`);
    return;
  }
  // Folders one by one; files grouped by the folder they are in.
  const groups = new Map<string, WideEntry[]>();
  for (const entry of wide) {
    const key = entry.kind === "folder" ? `folder\0${entry.path}` : `files\0${dirname(entry.path)}`;
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  for (const [key, entries] of groups) {
    const folder = key.slice(key.indexOf("\0") + 1);
    const isFolder = key.startsWith("folder\0");
    const what = isFolder
      ? `folder ${folder} is ${octal(entries[0]!.mode)}: other local users can see what is in it`
      : `${count(entries.length, "file")} in ${folder}${sep} can be read by other local users: ${listNames(entries, folder)}`;
    report.problem(what);
    if (!fix) continue;
    const failed: string[] = [];
    for (const entry of entries) {
      await chmod(entry.path, tightenedMode(entry.mode)).catch((error: unknown) => {
        failed.push(`${entry.path}: ${describeError(error)}`);
      });
    }
    if (failed.length > 0) {
      report.note(`could not tighten ${failed.join("; ")}`);
      continue;
    }
    report.repaired(
      isFolder
        ? `folder ${folder} is now ${octal(tightenedMode(entries[0]!.mode))} (was ${octal(entries[0]!.mode)})`
        : `${count(entries.length, "file")} in ${folder}${sep} now readable by you only: ${entries
            .slice(0, SHOWN)
            .map((e) => `${relative(folder, e.path)} ${octal(e.mode)} -> ${octal(tightenedMode(e.mode))}`)
            .join(", ")}${entries.length > SHOWN ? `, and ${entries.length - SHOWN} more` : ""}`,
    );
  }
}
