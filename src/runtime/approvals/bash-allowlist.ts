/**
 * The bash allowlist's matching rule (docs/tools.md, The bash allowlist). Pure, table-tested.
 *
 * An entry is either an exact command, matched when the command (trimmed) equals it (trimmed), or a prefix pattern,
 * an entry ending in `*`: matched when the command (trimmed) starts with what comes before the `*` and holds no
 * shell metacharacter that could make it run something else — a pipe `|`, `;`, `&` (`&&` and backgrounding),
 * redirection `>` or `<` (`<(` too), a newline, a backtick or `$(`. So `git status*` matches `git status --short`
 * but never `git status; rm -rf ~` or `git status > f`. A `*` anywhere but at the end is literal.
 */

/** The characters and sequences that keep a command from matching a prefix pattern. */
const METACHARACTERS = ["|", ";", "&", ">", "<", "\n", "\r", "`", "$("];

/** Whether `command` holds a shell metacharacter (see above). Pure. */
export function hasShellMetacharacter(command: string): boolean {
  return METACHARACTERS.some((m) => command.includes(m));
}

/** Whether the entry is a prefix pattern (ends in `*`). */
export function isPrefixPattern(entry: string): boolean {
  return entry.trimEnd().endsWith("*");
}

/** Whether `command` matches `entry`. Pure. */
export function matchesEntry(entry: string, command: string): boolean {
  const cmd = command.trim();
  const pattern = entry.trim();
  if (cmd.length === 0 || pattern.length === 0) return false;
  if (!isPrefixPattern(pattern)) return cmd === pattern;
  const prefix = pattern.slice(0, -1);
  if (prefix.trim().length === 0) return false;
  return !hasShellMetacharacter(cmd) && cmd.startsWith(prefix);
}

/** The first entry `command` matches, or undefined. Pure. */
export function allowedBy(entries: readonly string[], command: string): string | undefined {
  return entries.find((entry) => matchesEntry(entry, command));
}
