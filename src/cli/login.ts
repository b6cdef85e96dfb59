import { loadConfig } from "../core/config.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { stateDir } from "../core/paths.js";
import type { LoginFlowOptions, LoginFlows } from "../plugin-api/types.js";
import { describeHolder } from "../runtime/own-state-dir.js";
import { StateLock } from "../runtime/state-lock.js";
import { type CliIO, EXIT } from "./io.js";

/**
 * `clawdis login [--pairing-code <E.164>]` and `clawdis logout`: link and unlink the WhatsApp account. The flows
 * themselves belong to the WhatsApp plugin; the composition root hands them over (`CliDeps.whatsappLogin`), so
 * the core never imports a plugin. Contract:
 * - the config is loaded first (a bad one is exit 2), and the flow gets the whole of it;
 * - the state directory must be free: while a gateway owns it (its WhatsApp socket is the one socket of the
 *   account) login and logout say so and end 1 without opening a second socket; while they run they hold it, so a
 *   gateway started meanwhile waits for them;
 * - Ctrl-C aborts the flow, which cleans up after itself.
 */

export type { LoginFlowOptions };
/** What the WhatsApp plugin offers the CLI (plugins/whatsapp/login.ts). */
export type WhatsappLoginFlows = LoginFlows;

export interface LoginDeps {
  whatsappLogin?(): Promise<WhatsappLoginFlows>;
  configSections: ConfigSectionsSource;
  now?: () => number;
}

export async function runLogin(
  command: "login" | "logout",
  opts: { pairingCode?: string },
  io: CliIO,
  deps: LoginDeps,
  signal?: AbortSignal,
): Promise<number> {
  const loaded = loadConfig(io.env, await deps.configSections(io.env));
  if (!deps.whatsappLogin) {
    io.stderr(`clawdis: this build has no WhatsApp transport; \`clawdis ${command}\` is not available\n`);
    return EXIT.failed;
  }
  const dir = stateDir(io.env);
  const held = await StateLock.tryAcquire(dir, { kind: "agent", now: (deps.now ?? Date.now)() });
  if (!held.ok) {
    const who = describeHolder(held.holder);
    io.stderr(
      held.holder.kind === "gateway"
        ? `clawdis: ${who} runs on ${dir} and holds the WhatsApp link (one socket per account); stop it first, then run \`clawdis ${command}\`\n`
        : `clawdis: ${who} uses ${dir}; try again when it is done\n`,
    );
    return EXIT.failed;
  }
  const interrupt = signal ? undefined : onInterrupt();
  try {
    const flows = await deps.whatsappLogin();
    const options = {
      stateDir: dir,
      config: loaded.config as unknown as Readonly<Record<string, unknown>>,
      print: io.stderr,
      signal: signal ?? (interrupt as Interrupt).signal,
    };
    if (command === "logout") return await flows.logout(options);
    return await flows.login(
      opts.pairingCode !== undefined ? { ...options, pairingNumber: opts.pairingCode } : options,
    );
  } finally {
    interrupt?.dispose();
    await held.lock.release();
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
