import { isDeepStrictEqual } from "node:util";
import { formatPath } from "./config-path.js";

/**
 * What a change of `clawdis.json` needs while the gateway runs. Pure: two validated configs (and what the running
 * plugins declare) in, a plan out; see docs/configuration.md, "Changing the config while it runs".
 *
 * - `live`: applied without restarting anything (allowlists, mention settings, the agent, session settings,
 *   logging): the running code reads these keys at each use.
 * - `transports`: one plugin restarted alone (its own settings changed in a key it does not apply live, it is
 *   switched on or off, or a core key it reads only at create changed); the others keep running.
 * - `gateway`: the whole gateway restarts in-process (`gateway.port`, `gateway.bind`, `plugins.load`, where the
 *   sessions live).
 * - `unused`: changed, but nothing running reads it (the section of a plugin that is off).
 * Key paths only, never values: a secret (`apiKey`, `botToken`, a hook's token) is never printed.
 */

/** The most a change needs, in increasing order. */
export type ChangeNeed = "nothing" | "live" | "transport" | "gateway";

/** What a running plugin declares about a config change (see `PluginDefinition.reload` in the plugin API). */
export interface PluginReloadInfo {
  /** The plugin id (= its transport's channel). */
  id: string;
  /** The top-level section that holds its settings; absent: `plugins.entries.<id>.config`. */
  section?: string;
  /** Paths below its settings it applies live; a path covers the keys below it; `"*"` covers all. */
  live: readonly string[];
  /** Core key paths it reads only when created: a change restarts it. */
  restartOn: readonly string[];
  /** Whether it runs under the old config and under the new one. */
  on: readonly [before: boolean, after: boolean];
}

export interface TransportRestart {
  id: string;
  /** `start`: it was off and is on now; `stop`: the other way round; `restart`: stopped, then started afresh. */
  action: "restart" | "start" | "stop";
  /** The changed keys of its own that restart it (empty when only its on/off state follows from them). */
  keys: string[];
}

export interface ConfigDiff {
  /** Every changed key path, in the order of the config. */
  changed: string[];
  need: ChangeNeed;
  /** Applied without a restart. */
  live: string[];
  /** Plugins restarted alone, after their sends in flight. */
  transports: TransportRestart[];
  /** Keys that need the whole gateway. */
  gateway: string[];
  /** Changed, but nothing running reads them. */
  unused: string[];
}

type Path = readonly (string | number)[];

/** Core key paths applied live; a path covers the keys below it. Anything else in the core needs the gateway. */
const LIVE_CORE: readonly string[] = [
  "inbound.allowFrom",
  "inbound.owner",
  "inbound.groupChat",
  "inbound.reply.agent.baseUrl",
  "inbound.reply.agent.apiKey",
  "inbound.reply.agent.model",
  "inbound.reply.agent.contextTokens",
  "inbound.reply.agent.maxOutputTokens",
  "inbound.reply.agent.compactionModel",
  "inbound.reply.agent.fallbackModel",
  "inbound.reply.agent.systemPrompt",
  "inbound.reply.agent.tools",
  "inbound.reply.agent.approvals",
  "inbound.reply.session.idleMinutes",
  "inbound.reply.session.resetTriggers",
  "inbound.reply.session.dailyResetAt",
  "inbound.reply.session.maintenance",
  "inbound.reply.session.titles",
  "inbound.reply.session.timeouts",
  "inbound.reply.session.passivateAfterMinutes",
  "inbound.reply.session.compaction",
  "gateway.parkedReplyWarnSeconds",
  "gateway.timeZone",
  "gateway.openai",
  "logging",
];

/** Core keys no running code reads. */
const UNUSED_CORE: readonly string[] = ["$schema"];

/** The core's top-level keys (everything else is a plugin's section, or unchecked). */
const CORE_TOP: ReadonlySet<string> = new Set(["$schema", "inbound", "gateway", "plugins", "logging"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The paths where `a` and `b` differ: objects are walked key by key, anything else (lists too) is one value. */
export function changedPaths(a: unknown, b: unknown, at: Path = []): Path[] {
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = [...Object.keys(a), ...Object.keys(b).filter((key) => !Object.hasOwn(a, key))];
    return keys.flatMap((key) => changedPaths(a[key], b[key], [...at, key]));
  }
  return isDeepStrictEqual(a, b) ? [] : [at];
}

/** `pattern` ("a.b") covers `path` when it is the path or one of its ancestors; `"*"` covers everything. */
function covers(pattern: string, path: Path): boolean {
  if (pattern === "*") return true;
  const segments = pattern.split(".");
  return segments.length <= path.length && segments.every((segment, i) => String(path[i]) === segment);
}

/** How the core itself takes a change of `path` (a path of a core key). */
export function coreNeed(path: Path): "live" | "gateway" | "nothing" {
  if (UNUSED_CORE.some((pattern) => covers(pattern, path))) return "nothing";
  if (LIVE_CORE.some((pattern) => covers(pattern, path))) return "live";
  return "gateway";
}

/** Which plugin's settings `path` is in, and the path below its settings. */
function ownerOf(
  path: Path,
  plugins: readonly PluginReloadInfo[],
): { plugin: PluginReloadInfo | undefined; below: Path | undefined } | undefined {
  const [top, second, id, fourth, ...rest] = path;
  if (top === "plugins" && second === "entries" && typeof id === "string") {
    const plugin = plugins.find((p) => p.id === id && p.section === undefined);
    // `plugins.entries.<id>.enabled` switches it; only what is below `.config` can be live.
    return { plugin, below: fourth === "config" ? rest : undefined };
  }
  if (typeof top === "string" && !CORE_TOP.has(top)) {
    return { plugin: plugins.find((p) => p.section === top), below: path.slice(1) };
  }
  return undefined;
}

/**
 * The plan for going from `before` to `after` (both validated, fully defaulted configs, plugin sections
 * included) while `plugins` run.
 */
export function diffConfig(
  before: Readonly<object>,
  after: Readonly<object>,
  plugins: readonly PluginReloadInfo[],
): ConfigDiff {
  const paths = changedPaths(before, after);
  const diff: ConfigDiff = {
    changed: [],
    need: "nothing",
    live: [],
    transports: [],
    gateway: [],
    unused: [],
  };
  const restart = new Map<string, string[]>();
  const restartFor = (id: string, key?: string) => {
    const keys = restart.get(id) ?? [];
    if (key !== undefined && !keys.includes(key)) keys.push(key);
    restart.set(id, keys);
  };
  for (const path of paths) {
    const key = formatPath(path);
    diff.changed.push(key);
    const owned = ownerOf(path, plugins);
    if (owned) {
      const { plugin, below } = owned;
      if (!plugin || (!plugin.on[0] && !plugin.on[1])) diff.unused.push(key);
      else if (below !== undefined && plugin.live.some((pattern) => covers(pattern, below)))
        diff.live.push(key);
      else restartFor(plugin.id, key);
      continue;
    }
    const need = coreNeed(path);
    if (need === "gateway") diff.gateway.push(key);
    else if (need === "nothing") diff.unused.push(key);
    else diff.live.push(key);
    for (const plugin of plugins) {
      if (plugin.on[1] && plugin.restartOn.some((pattern) => covers(pattern, path)))
        restartFor(plugin.id, key);
    }
  }
  // Switched on or off (e.g. a bot token added): started or stopped, whatever the keys said.
  for (const plugin of plugins) if (plugin.on[0] !== plugin.on[1]) restartFor(plugin.id);
  diff.transports = [...restart].map(([id, keys]) => {
    const on = plugins.find((p) => p.id === id)?.on ?? [true, true];
    const action = on[0] === on[1] ? "restart" : on[1] ? "start" : "stop";
    return { id, action, keys };
  });
  diff.need =
    diff.gateway.length > 0
      ? "gateway"
      : diff.transports.length > 0
        ? "transport"
        : diff.live.length > 0
          ? "live"
          : "nothing";
  return diff;
}

/**
 * The one log line of a reload, naming the changed keys and what each needs (never a value):
 * `config change: applied live: inbound.allowFrom; echo restarts for echo.maxTextLength`.
 */
export function describeDiff(diff: ConfigDiff): string {
  if (diff.changed.length === 0) return "config re-read: no setting changed";
  if (diff.gateway.length > 0) {
    const rest = diff.changed.filter((key) => !diff.gateway.includes(key));
    const also = rest.length > 0 ? `; with it: ${rest.join(", ")}` : "";
    return `config change: the gateway restarts for ${diff.gateway.join(", ")}${also}`;
  }
  const parts: string[] = [];
  if (diff.live.length > 0) parts.push(`applied live: ${diff.live.join(", ")}`);
  for (const { id, action, keys } of diff.transports) {
    const verb = action === "restart" ? "restarts" : action === "start" ? "starts" : "stops";
    parts.push(`${id} ${verb}${keys.length > 0 ? ` for ${keys.join(", ")}` : ""}`);
  }
  if (diff.unused.length > 0) parts.push(`not used by anything running: ${diff.unused.join(", ")}`);
  return `config change: ${parts.join("; ")}`;
}
