import { lstat, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import type { ToolContext, ToolFileAccess } from "../../plugin-api/types.js";

/**
 * Where a file tool's path really leads, and whether the call may go there (docs/agent.md, Tools).
 *
 * Contract of `resolveToolPath`:
 * - the path as the model gave it: `~` expanded, relative paths against the working directory, `..` applied;
 * - then its real location: the deepest part that exists is resolved with symlinks followed (a dangling symlink
 *   is refused: writing through it would create its target wherever it points); the missing rest is appended;
 * - that real path is checked by `pathVerdict` against the call's `files` (the session's confinement and the
 *   state directory's secrets, themselves resolved the same way), and the tool uses the real path, so what was
 *   checked is what is opened. (A symlink swapped in between the check and the open is not caught.)
 */

export type ResolvedToolPath = { ok: true; path: string } | { ok: false; error: string };

/** Whether `path` is `root` or lies under it (both absolute and normalized). Pure. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !isAbsolute(rel));
}

/**
 * Why a call may not use the real path `real`, or undefined when it may. `access` holds real paths already.
 * Pure: the decision of `resolveToolPath`, table-tested.
 */
export function pathVerdict(real: string, given: string, access: ToolFileAccess): string | undefined {
  const secret = access.secrets.find((s) => isInside(s.path, real));
  if (secret) {
    return (
      `refused: ${given} is ${secret.what}; tools never read, write or send the state directory's config, ` +
      "token, credentials, journal or plugin state"
    );
  }
  if (access.confinedTo !== undefined && !isInside(access.confinedTo, real)) {
    return `refused: ${given} is outside this session's workspace; here file tools reach only the working directory and what is below it`;
  }
  return undefined;
}

/** `path` as the model gave it, made absolute: `~` expanded, relative to `cwd`, `..` applied. Pure. */
export function lexicalToolPath(cwd: string, path: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return resolve(cwd, path);
}

/**
 * The real location of an absolute path: the deepest existing part with symlinks resolved, plus the rest.
 * @throws Error with `code: "DANGLING"` when a part is a symlink whose target does not exist.
 */
export async function realLocation(absolute: string): Promise<string> {
  const rest: string[] = [];
  let at = absolute;
  for (;;) {
    try {
      const real = await realpath(at);
      return rest.length === 0 ? real : join(real, ...rest.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      const link = await lstat(at).then(
        (info) => info.isSymbolicLink(),
        () => false,
      );
      if (link)
        throw Object.assign(new Error(`${at} is a symlink to a missing target`), { code: "DANGLING" });
      const parent = dirname(at);
      if (parent === at) return absolute;
      rest.push(basename(at));
      at = parent;
    }
  }
}

/** The call's path, resolved and checked (see the contract above); `tool` names the tool in the error. */
export async function resolveToolPath(
  context: Pick<ToolContext, "cwd" | "files">,
  path: string,
  tool: string,
): Promise<ResolvedToolPath> {
  const absolute = lexicalToolPath(context.cwd, path);
  let real: string;
  try {
    real = await realLocation(absolute);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "DANGLING")
      return { ok: false, error: `${tool}: refused: ${path} is a symlink to a missing file` };
    return {
      ok: false,
      error: `${tool}: ${path}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const files = context.files;
  if (!files) return { ok: true, path: real };
  const access: ToolFileAccess = {
    secrets: await Promise.all(
      files.secrets.map(async (s) => ({
        path: await realLocation(s.path).catch(() => s.path),
        what: s.what,
      })),
    ),
    ...(files.confinedTo !== undefined
      ? { confinedTo: await realLocation(files.confinedTo).catch(() => files.confinedTo as string) }
      : {}),
  };
  const why = pathVerdict(real, path, access);
  return why === undefined ? { ok: true, path: real } : { ok: false, error: `${tool}: ${why}` };
}
