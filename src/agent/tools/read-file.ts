import { readFile, stat } from "node:fs/promises";
import type { ToolDefinition } from "../../plugin-api/types.js";
import { describeFsError, optionalInteger, requireString, ToolArgError } from "./tool-args.js";
import { resolveToolPath } from "./tool-path.js";

/**
 * `read_file`: the text of a file, or a window of its lines (`offset` is the 1-based first line, `limit` the
 * number of lines). The text comes back verbatim (no line numbers), so it can be copied into `edit_file`'s
 * `old_text`. Long files are cut at a line boundary with a note saying which `offset` continues; binary files
 * and files too big to load are refused with a hint instead.
 */

export interface ReadFileToolOptions {
  /** Default number of lines when `limit` is not given. */
  defaultLineLimit?: number;
  /** Most bytes of text returned by one call. */
  maxBytes?: number;
  /** Files larger than this are not loaded at all. */
  maxFileBytes?: number;
}

const LINE_LIMIT = 2000;
const MAX_BYTES = 64 * 1024;
const MAX_FILE_BYTES = 32 * 1024 * 1024;

export function readFileTool(options: ReadFileToolOptions = {}): ToolDefinition {
  const defaultLimit = options.defaultLineLimit ?? LINE_LIMIT;
  const maxBytes = options.maxBytes ?? MAX_BYTES;
  const maxFileBytes = options.maxFileBytes ?? MAX_FILE_BYTES;
  return {
    name: "read_file",
    description:
      "Read a text file. Relative paths are resolved against the working directory. Returns the text as it is " +
      `(up to ${defaultLimit} lines by default); use offset and limit to page through long files.`,
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "File to read, relative to the working directory or absolute." },
        offset: { type: "integer", minimum: 1, description: "1-based line number to start at (default 1)." },
        limit: {
          type: "integer",
          minimum: 1,
          description: `Most lines to return (default ${defaultLimit}).`,
        },
      },
      required: ["path"],
      additionalProperties: false,
    },
    async execute(args, context) {
      let path: string;
      let offset: number;
      let limit: number;
      try {
        path = requireString(args, "path");
        offset = optionalInteger(args, "offset", 1) ?? 1;
        limit = optionalInteger(args, "limit", 1) ?? defaultLimit;
      } catch (error) {
        if (error instanceof ToolArgError) return { ok: false, output: `read_file: ${error.message}` };
        throw error;
      }
      const resolved = await resolveToolPath(context, path, "read_file");
      if (!resolved.ok) return { ok: false, output: resolved.error };
      const absolute = resolved.path;
      let data: Buffer;
      try {
        const info = await stat(absolute);
        if (info.isDirectory()) return { ok: false, output: describeFsError({ code: "EISDIR" }, path) };
        if (info.size > maxFileBytes) {
          return {
            ok: false,
            output: `${path} is ${info.size} bytes, too big to read whole; use bash (head, tail, sed -n, grep) to look at parts of it`,
          };
        }
        data = await readFile(absolute, { signal: context.signal });
      } catch (error) {
        return { ok: false, output: describeFsError(error, path) };
      }
      if (data.subarray(0, 8192).includes(0)) {
        return {
          ok: false,
          output: `${path} looks like a binary file (${data.length} bytes); it is not shown`,
        };
      }
      return { ok: true, output: windowOf(data.toString("utf8"), path, offset, limit, maxBytes) };
    },
  };
}

/** The requested lines, cut to `maxBytes` at a line boundary, with a note when more remains. */
export function windowOf(
  text: string,
  path: string,
  offset: number,
  limit: number,
  maxBytes: number,
): string {
  if (text.length === 0) return `(${path} is empty)`;
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  const total = lines.length;
  if (offset > total) return `(offset ${offset} is past the end of ${path}, which has ${total} lines)`;
  const wanted = lines.slice(offset - 1, offset - 1 + limit);
  const kept: string[] = [];
  let bytes = 0;
  for (const line of wanted) {
    const size = Buffer.byteLength(line, "utf8") + 1;
    if (bytes + size > maxBytes) {
      if (kept.length === 0) kept.push(`${cutToBytes(line, maxBytes)} [… line cut at ${maxBytes} bytes]`);
      break;
    }
    kept.push(line);
    bytes += size;
  }
  const last = offset - 1 + kept.length;
  const body = kept.join("\n");
  if (last >= total) return body;
  return `${body}\n[… ${total - last} more lines in ${path} (${total} in all); read_file with offset=${last + 1} continues]`;
}

function cutToBytes(text: string, maxBytes: number): string {
  return Buffer.from(text, "utf8")
    .subarray(0, maxBytes)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
}
