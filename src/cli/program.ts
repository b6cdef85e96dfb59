import { Command, CommanderError } from "commander";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { describeError, isClawdisError } from "../core/errors.js";
import type { PluginDefinition } from "../plugin-api/types.js";
import type { TerminalChat } from "./chat.js";
import { type CliIO, EXIT } from "./io.js";
import { type CliPlugin, pluginCommands, registerPluginCommands } from "./plugin-commands.js";
import type { RemindersCommand } from "./reminders.js";
import type { SessionsSearchOptions } from "./sessions-search.js";

/**
 * What only the composition root (src/main.ts) knows: the built-in plugins, the config sections known without
 * loading a plugin's runtime, the terminal chat client, and the plugins' commands.
 */
export interface CliDeps {
  version: string;
  builtinPlugins(): Promise<PluginDefinition[]>;
  configSections: ConfigSectionsSource;
  /**
   * The schema's fingerprint for the config cache of read-only commands (core/config-cache.ts): the start-up
   * bundle's id; undefined (no cache) when the compiled modules run.
   */
  configFingerprint?: string;
  terminalChat(): Promise<TerminalChat>;
  /**
   * The built-in plugins that add commands (`clawdis login`), as the CLI knows them without their runtime; loaded
   * only when the command line names no core command.
   */
  cliPlugins?(): Promise<readonly CliPlugin[]>;
}

/** The flags of `clawdis sessions search`, as commander gives them (`--store` is the parent's). */
type SearchFlags = Omit<SessionsSearchOptions, "store">;

/** The commands of clawdis itself, `help` included; a plugin's command may take none of these names. */
export const CORE_COMMANDS: readonly string[] = [
  "gateway",
  "agent",
  "chat",
  "sessions",
  "status",
  "reminders",
  "doctor",
  "init",
  "help",
];

/**
 * Whether `argv` may need the plugins' commands: it names no core command (a plugin's command, an unknown word, or
 * none at all, where the help lists every command), unless it only asks for the version. Pure.
 */
export function needsPluginCommands(argv: readonly string[]): boolean {
  const word = argv.find((arg) => !arg.startsWith("-"));
  if (word !== undefined) return word === "help" || !CORE_COMMANDS.includes(word);
  const asks = (...flags: string[]) => argv.some((arg) => flags.includes(arg));
  return !(asks("-v", "--version") && !asks("-h", "--help"));
}

/**
 * The `clawdis` command line. Each command's module is imported only when that command runs, so that
 * `clawdis --version` and `clawdis sessions` do not load the model client or the plugins. `plugins`: those whose
 * commands it also offers (after `gateway`); a command named like a core command or another plugin's is refused
 * (ClawdisError PLUGIN_INVALID).
 */
export function buildProgram(
  io: CliIO,
  deps: CliDeps,
  setExit: (code: number) => void,
  plugins: readonly CliPlugin[] = [],
): Command {
  const fromPlugins = pluginCommands(plugins, CORE_COMMANDS);
  const program = new Command("clawdis")
    .description("A personal AI assistant gateway: one agent, every chat app.")
    .version(deps.version, "-v, --version")
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .exitOverride()
    .showHelpAfterError();

  const run = (load: () => Promise<number>) => async () => {
    setExit(await load());
  };

  const gateway = program
    .command("gateway")
    .description("run the gateway: every enabled transport, the local HTTP server, the session runtime")
    .option(
      "--port <n>",
      "listen on this port for this run, instead of gateway.port (the file is not changed)",
    )
    .action((opts: { port?: string }) =>
      run(async () => (await import("./gateway.js")).runGateway(io, deps, opts))(),
    );
  gateway
    .command("stop")
    .description("ask the running gateway to stop (as on SIGTERM) and wait until it has exited")
    .action(run(async () => (await import("./gateway-stop.js")).runGatewayStop(io, deps.configSections)));

  // The plugins' commands (WhatsApp's `login` / `logout`) come after `gateway`, before the session commands.
  registerPluginCommands(program, fromPlugins, io, deps, setExit);

  program
    .command("agent")
    .description("one turn on a session (default the primary), through the running gateway when there is one")
    .requiredOption("-m, --message <text>", "the message")
    .option("--session <key>", "session key (default: the primary session)")
    .option("--json", "print the reply as JSON")
    .action((opts: { message?: string; session?: string; json?: boolean }) =>
      run(async () => (await import("./agent.js")).runAgent(opts, io, deps))(),
    );

  program
    .command("chat")
    .description("an interactive terminal chat on the primary session, through the running gateway")
    .option("--attach", "watch a session live (what arrives, tool calls included) without sending")
    .option("--session <key>", "with --attach: the session to watch (default the primary session)")
    .option("--filter <names>", "with --attach: only these outputs, e.g. text,toolCalls (lifecycle always)")
    .action((opts: { attach?: boolean; session?: string; filter?: string }) =>
      run(async () => (await import("./chat.js")).runChat(io, await deps.terminalChat(), opts))(),
    );

  const sessions = program
    .command("sessions")
    .description("list sessions, newest first")
    .option("--json", "print JSON only")
    .option("--active <minutes>", "only sessions updated within this many minutes")
    .option("--store <path>", "session store to read instead of the configured one")
    .action((opts: { json?: boolean; active?: string; store?: string }) =>
      run(async () =>
        (await import("./sessions.js")).runSessions(
          opts,
          io,
          undefined,
          deps.configSections,
          deps.configFingerprint,
        ),
      )(),
    );
  sessions
    .command("show <key>")
    .description("one session: its id, folder, transcript, last turns and log tail")
    .option("--json", "print JSON only")
    .option("--turns <n>", "how many of the last turns (default 5)")
    .option("--lines <n>", "how many of the log's last lines (default 20)")
    .action((key: string, opts: { json?: boolean; turns?: string; lines?: string }) =>
      run(async () =>
        // `--json` after `show` is taken by `sessions`, which has one too.
        (await import("./session-show.js")).runSessionShow(
          key,
          { ...opts, json: opts.json === true || sessions.opts().json === true },
          io,
          deps.configSections,
        ),
      )(),
    );

  sessions
    .command("search <text>")
    .description("search every transcript for text, newest first (reads the files; no gateway needed)")
    .option("--regex", "take the text as a regular expression")
    .option("--key <key>", "only the transcripts of this session key")
    .option("--since <when>", "only messages since then: 30m, 12h, 7d, 2w, or a date like 2026-01-31")
    .option("--role <role>", "only messages of this role: user, assistant or tool")
    .option("--limit <n>", "stop after this many hits (default 20, at most 1000)")
    .option("--json", "print JSON only")
    .action((text: string, opts: SearchFlags) =>
      run(async () => {
        // `--json` and `--store` before `search` are taken by `sessions`, which has them too.
        const parent = sessions.opts() as { json?: boolean; store?: string };
        return (await import("./sessions-search.js")).runSessionsSearch(
          text,
          {
            ...opts,
            json: opts.json === true || parent.json === true,
            ...(parent.store !== undefined ? { store: parent.store } : {}),
          },
          io,
          deps.configSections,
        );
      })(),
    );

  sessions
    .command("cleanup")
    .description("prune old sessions by maintenance's limits, their files moved to sessions/archive/")
    .option("--dry-run", "only say what would be pruned")
    .option("--json", "print JSON only")
    .option("--purge", "delete the pruned sessions' files instead of archiving them")
    .action((opts: { dryRun?: boolean; json?: boolean; purge?: boolean }) =>
      run(async () =>
        (await import("./sessions-cleanup.js")).runSessionsCleanup(
          { ...opts, json: opts.json === true || sessions.opts().json === true },
          io,
          deps.configSections,
        ),
      )(),
    );

  program
    .command("status")
    .description("store path, session count, recent sessions, transport state")
    .option("--json", "print JSON only")
    .action((opts: { json?: boolean }) =>
      run(async () =>
        (await import("./status.js")).runStatus(
          opts,
          io,
          undefined,
          deps.configSections,
          deps.configFingerprint,
        ),
      )(),
    );

  const reminders = program
    .command("reminders")
    .description("reminders: list, add or remove (through the running gateway when there is one)");
  const remindersRun = (load: () => Promise<RemindersCommand>) =>
    run(async () => (await import("./reminders.js")).runReminders(await load(), io, deps.configSections))();
  reminders
    .command("list", { isDefault: true })
    .description("every reminder with its next time, and the entries of reminders.json that are skipped")
    .option("--json", "print JSON only")
    .action((opts: { json?: boolean }) => remindersRun(async () => ({ action: "list", ...opts })));
  reminders
    .command("add")
    .description('add one: when is a duration ("20m", "90s"), an ISO time or a cron expression (quoted)')
    .argument("<when>", "a duration, an ISO time, or a cron expression")
    .argument("<text...>", "what to be reminded of")
    .option("--session <key>", "the session it fires in (default: the primary session)")
    .option("--json", "print the reminder as JSON")
    .action((when: string, text: string[], opts: { session?: string; json?: boolean }) =>
      remindersRun(async () => ({ action: "add", when, text: text.join(" "), ...opts })),
    );
  reminders
    .command("rm")
    .description("remove one, by id")
    .argument("<id>", "the reminder's id (as listed)")
    .action((id: string) => remindersRun(async () => ({ action: "rm", id })));

  program
    .command("doctor")
    .description("check config, store and transcripts")
    .option("--fix", "repair what can be repaired, keeping backups")
    .option("--json", "print one JSON object only")
    .action((opts: { fix?: boolean; json?: boolean }) =>
      run(async () => (await import("./doctor.js")).runDoctor(opts, io, deps.configSections))(),
    );

  program
    .command("init")
    .description("write a commented starter config (never overwrites one)")
    .option("--base-url <url>", "the model endpoint (an OpenAI-compatible base URL)")
    .option("--model <name>", "the model")
    .option("--api-key <key>", "the endpoint's API key (or set OPENAI_API_KEY)")
    .action((opts: { baseUrl?: string; model?: string; apiKey?: string }) =>
      run(async () => (await import("./init.js")).runInit(opts, io))(),
    );

  return program;
}

/** Runs one command line; returns the exit code. Never throws. */
export async function runCli(argv: string[], io: CliIO, deps: CliDeps): Promise<number> {
  let code: number = EXIT.ok;
  try {
    const plugins = needsPluginCommands(argv) ? ((await deps.cliPlugins?.()) ?? []) : [];
    const program = buildProgram(
      io,
      deps,
      (c) => {
        code = c;
      },
      plugins,
    );
    await program.parseAsync(argv, { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end through here with exit code 0.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (isClawdisError(error)) {
      io.stderr(`clawdis: ${error.message}\n`);
      return error.exitCode;
    }
    io.stderr(`clawdis: unexpected error: ${describeError(error)}\n`);
    if (error instanceof Error && error.stack) io.stderr(`${error.stack}\n`);
    return EXIT.failed;
  }
}
