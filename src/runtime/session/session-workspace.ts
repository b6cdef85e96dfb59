import { mkdir, stat } from "node:fs/promises";
import type { ClawdisConfig } from "../../core/config-schema.js";
import type { ToolDefinition } from "../../plugin-api/types.js";
import { sessionKeyFor } from "../../routing/session-key.js";
import { type SessionPaths, type SessionRoots, sessionPaths } from "../../sessions/session-paths.js";
import type { RuntimePort, StoragePort } from "./ports.js";

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
 * The folders the paths of sessions are in (session-paths.ts): the store's folder (`storeDir`, where every
 * transcript is), the workspace root, and the primary session's key (`mainKey`, or `global` under
 * `scope: "global"`), whose workspace is the root itself. The gateway and the doctor find sessions' files
 * through these.
 */
export function sessionRootsOf(config: ClawdisConfig, storeDir: string, workspaceDir: string): SessionRoots {
  const primaryKey = sessionKeyFor({ chatType: "direct", chatId: "" }, config.inbound.reply.session);
  return { storeDir, workspaceDir, primaryKey };
}

/**
 * The paths of session `key` in conversation `sessionId` (session-paths.ts): the primary session (`mainKey`, or
 * `global` under `scope: "global"`) works in the workspace itself. The workspace is not created here: a turn that
 * runs no tool and stages no file never touches it; the first tool call of a turn creates it (0700) when it is not
 * there (`withWorkspace`), and staging an attachment creates its inbox.
 */
export function pathsOf(
  ports: { runtime: Pick<RuntimePort, "config" | "workspaceDir">; storage: Pick<StoragePort, "store"> },
  key: string,
  sessionId: string,
): SessionPaths {
  const { config, workspaceDir } = ports.runtime;
  return sessionPaths(sessionRootsOf(config, ports.storage.store.dir, workspaceDir), key, sessionId);
}
