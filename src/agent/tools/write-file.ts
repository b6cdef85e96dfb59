import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { ToolDefinition } from "../../plugin-api/types.js";
import { describeFsError, requireString, ToolArgError } from "./tool-args.js";
import { resolveToolPath } from "./tool-path.js";

/**
 * `write_file`: writes the whole content of a file, creating missing parent directories, replacing the file
 * when it exists. Reports the number of bytes written (UTF-8).
 */
export function writeFileTool(): ToolDefinition {
  return {
    name: "write_file",
    description:
      "Write a text file, replacing it if it exists and creating missing parent directories. " +
      "Relative paths are resolved against the working directory. To change part of a file, use edit_file.",
    parameters: {
      type: "object",
      properties: {
        path: {
          type: "string",
          description: "File to write, relative to the working directory or absolute.",
        },
        content: { type: "string", description: "The complete new content of the file." },
      },
      required: ["path", "content"],
      additionalProperties: false,
    },
    async execute(args, context) {
      let path: string;
      let content: string;
      try {
        path = requireString(args, "path");
        content = requireString(args, "content", { allowEmpty: true });
      } catch (error) {
        if (error instanceof ToolArgError) return { ok: false, output: `write_file: ${error.message}` };
        throw error;
      }
      const resolved = await resolveToolPath(context, path, "write_file");
      if (!resolved.ok) return { ok: false, output: resolved.error };
      const absolute = resolved.path;
      try {
        const existed = await stat(absolute).then(
          (info) => {
            if (info.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
            return true;
          },
          (error: { code?: string }) => {
            if (error.code === "ENOENT") return false;
            throw error;
          },
        );
        await mkdir(dirname(absolute), { recursive: true });
        const bytes = Buffer.from(content, "utf8");
        await writeFile(absolute, bytes, { signal: context.signal });
        return {
          ok: true,
          output: `${existed ? "replaced" : "created"} ${path}: wrote ${bytes.length} bytes`,
        };
      } catch (error) {
        return { ok: false, output: describeFsError(error, path) };
      }
    },
  };
}
