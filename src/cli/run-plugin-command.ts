import { loadConfig } from "../core/config.js";
import { stateDir } from "../core/paths.js";
import { validatePluginConfig } from "../host/plugin-config.js";
import { describeHolder } from "../runtime/own-state-dir.js";
import { StateLock } from "../runtime/state-lock.js";
import { type CliIO, EXIT } from "./io.js";
import type { PluginCommandDeps, PluginCommandEntry } from "./plugin-command-types.js";

export type { PluginCommandDeps };

/**
 * Runs one plugin command. Contract:
 * - the config is loaded first (a bad one is exit 2, thrown), and the command gets its plugin's settings,
 *   validated as the gateway would;
 * - a command that declares `exclusive` needs the state directory free: while a gateway owns it the command says
 *   what the gateway holds and ends 1 without running, while another command uses it likewise; while the command
 *   runs it holds the directory, so a gateway started meanwhile waits;
 * - Ctrl-C (or SIGTERM) aborts the command's signal; `signal` replaces that (tests).
 */
export async function runPluginCommand(
  entry: PluginCommandEntry,
  options: Readonly<Record<string, string | boolean | undefined>>,
  io: CliIO,
  deps: PluginCommandDeps,
  signal?: AbortSignal,
): Promise<number> {
  const { plugin, command } = entry;
  const loaded = loadConfig(io.env, await deps.configSections(io.env));
  const settings = validatePluginConfig(
    plugin,
    loaded.config.plugins.entries[plugin.id]?.config,
    loaded.config,
  );
  const dir = stateDir(io.env);
  let lock: StateLock | undefined;
  if (command.exclusive) {
    const held = await StateLock.tryAcquire(dir, { kind: "agent", now: (deps.now ?? Date.now)() });
    if (!held.ok) {
      const who = describeHolder(held.holder);
      io.stderr(
        held.holder.kind === "gateway"
          ? `clawdis: ${who} runs on ${dir} and ${command.exclusive.gatewayHolds}; stop it first, then run \`clawdis ${command.name}\`\n`
          : `clawdis: ${who} uses ${dir}; try again when it is done\n`,
      );
      return EXIT.failed;
    }
    lock = held.lock;
  }
  const interrupt = signal ? undefined : onInterrupt();
  try {
    return await command.run(options, {
      config: settings,
      gatewayConfig: loaded.config,
      stateDir: dir,
      env: io.env,
      stdout: io.stdout,
      stderr: io.stderr,
      signal: signal ?? (interrupt as Interrupt).signal,
    });
  } finally {
    interrupt?.dispose();
    await lock?.release();
  }
}

interface Interrupt {
  signal: AbortSignal;
  dispose(): void;
}

/** A signal aborted by the first SIGINT/SIGTERM until `dispose`. */
function onInterrupt(): Interrupt {
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error("interrupted"));
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
