/**
 * Reading a tool's arguments. Models send what they send: a wrong or missing argument is an expected failure
 * that goes back to the model as `{ ok: false }` with a message it can act on, never a crash.
 * Numbers and booleans sent as strings ("10", "true") are accepted, as models often do that.
 */

export class ToolArgError extends Error {}

export function requireString(
  args: Record<string, unknown>,
  name: string,
  options?: { allowEmpty?: boolean },
): string {
  const value = args[name];
  if (typeof value !== "string") throw new ToolArgError(`missing argument "${name}" (a string)`);
  if (!options?.allowEmpty && value.length === 0)
    throw new ToolArgError(`argument "${name}" must not be empty`);
  return value;
}

export function optionalInteger(
  args: Record<string, unknown>,
  name: string,
  min: number,
): number | undefined {
  const raw = args[name];
  if (raw === undefined || raw === null) return undefined;
  const value = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : raw;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new ToolArgError(`argument "${name}" must be an integer ≥ ${min}`);
  }
  return value;
}

export function optionalBoolean(args: Record<string, unknown>, name: string): boolean | undefined {
  const raw = args[name];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw === "boolean") return raw;
  if (raw === "true" || raw === "false") return raw === "true";
  throw new ToolArgError(`argument "${name}" must be true or false`);
}

/** One line for a failed file operation, in terms of the path the model used. */
export function describeFsError(error: unknown, path: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case "ENOENT":
      return `${path} does not exist`;
    case "EACCES":
    case "EPERM":
      return `permission denied: ${path}`;
    case "EISDIR":
      return `${path} is a directory (list it with the bash tool)`;
    case "ENOTDIR":
      return `a parent of ${path} is not a directory`;
    case "ABORT_ERR":
      return `aborted while working on ${path}`;
    default:
      return `${path}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
