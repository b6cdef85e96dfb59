import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { ToolDefinition } from "../../plugin-api/types.js";
import { sessionKeyFor } from "../../routing/session-key.js";
import type { SessionPorts } from "./ports.js";

/**
 * The turn's tools, the first call of which makes sure the working directory is there: when it is missing (never
 * made, or deleted since), it is created (0700) before the tool runs. A turn without tool calls touches nothing.
 */
export function withWorkspace(tools: ToolDefinition[], cwd: string): ToolDefinition[] {
  let ready: Promise<void> | undefined;
  const ensure = () => {
    ready ??= stat(cwd).then(
      () => {},
      async (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") await mkdir(cwd, { recursive: true, mode: 0o700 });
      },
    );
    return ready;
  };
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    execute: async (args, context) => {
      await ensure();
      return tool.execute(args, context);
    },
  }));
}

/**
 * The session's working directory (tools, attachments): the workspace for the primary session (`mainKey`, or
 * `global` under `scope: "global"`), a folder per other key. Not created here: a turn that runs no tool and
 * stages no file never touches it; the first tool call of a turn creates it (0700) when it is not there
 * (`withWorkspace`), and staging an attachment creates its inbox in it.
 */
export function cwdFor(ports: Pick<SessionPorts, "config" | "workspaceDir">, key: string): string {
  return key === sessionKeyFor({ chatType: "direct", chatId: "" }, ports.config.inbound.reply.session)
    ? ports.workspaceDir
    : join(ports.workspaceDir, safeDirName(key));
}

function safeDirName(key: string): string {
  return key.replace(/[^A-Za-z0-9._-]/g, "_");
}
