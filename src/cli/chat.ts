import { randomUUID } from "node:crypto";
import { loadConfig } from "../core/config.js";
import { useColor } from "./agent-live.js";
import { connectGateway } from "./gateway-client.js";
import { type CliIO, EXIT } from "./io.js";

export type TerminalChat = (options: {
  baseUrl: string;
  token: string;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  isTTY: boolean;
  /** ANSI styles and rendered Markdown: on a terminal, unless NO_COLOR is set. */
  color?: boolean;
  chatId?: string;
  /** `--attach`: watch the session live, send nothing. */
  attach?: { session?: string; filter?: string };
}) => Promise<number>;

export interface ChatOptions {
  attach?: boolean;
  session?: string;
  filter?: string;
}

/**
 * `clawdis chat`: the terminal chat on the primary session, through the running gateway. Exit 1 with one line
 * when none answers; a gateway that answers but refuses the token (or is not a gateway) is a GATEWAY_UNREACHABLE
 * error saying so, as for `clawdis agent`, never "not running".
 */
export async function runChat(
  io: CliIO,
  terminalChat: TerminalChat,
  opts: ChatOptions = {},
): Promise<number> {
  if (!opts.attach && (opts.session !== undefined || opts.filter !== undefined)) {
    io.stderr(
      "--session and --filter go with --attach (watching a session); `clawdis chat` talks to the primary session\n",
    );
    return EXIT.usage;
  }
  const { config } = loadConfig(io.env);
  const connection = await connectGateway(config, io.env);
  if (!connection) {
    const { bind, port } = config.gateway;
    io.stderr(`the gateway is not running at http://${bind}:${port}: start it with \`clawdis gateway\`\n`);
    return EXIT.failed;
  }
  const isTTY = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  return terminalChat({
    baseUrl: connection.url,
    token: connection.token,
    input: process.stdin,
    output: process.stdout,
    isTTY,
    color: useColor(isTTY, io.env),
    chatId: `terminal:${randomUUID()}`,
    ...(opts.attach
      ? {
          attach: {
            ...(opts.session !== undefined ? { session: opts.session } : {}),
            ...(opts.filter !== undefined ? { filter: opts.filter } : {}),
          },
        }
      : {}),
  });
}
