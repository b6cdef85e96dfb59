import { readFile, writeFile } from "node:fs/promises";
import type { ToolDefinition } from "../../plugin-api/types.js";
import { describeFsError, optionalBoolean, requireString, ToolArgError } from "./tool-args.js";
import { resolveToolPath } from "./tool-path.js";

/**
 * `edit_file`: replaces an exact piece of text. `old_text` must occur exactly once, unless `replace_all` is
 * set; otherwise nothing is written and the message says why, so the model can read the file again and retry.
 * The replacement is literal (no `$&`-style patterns).
 */
export function editFileTool(): ToolDefinition {
  return {
    name: "edit_file",
    description:
      "Replace an exact piece of text in a file with new text. old_text must match the file exactly, " +
      "including whitespace and indentation, and must occur only once unless replace_all is true. " +
      "Read the file first to copy the text.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "File to edit, relative to the working directory or absolute." },
        old_text: { type: "string", description: "The exact text to replace." },
        new_text: { type: "string", description: "The text to put in its place (may be empty to delete)." },
        replace_all: {
          type: "boolean",
          description: "Replace every occurrence instead of exactly one (default false).",
        },
      },
      required: ["path", "old_text", "new_text"],
      additionalProperties: false,
    },
    async execute(args, context) {
      let path: string;
      let oldText: string;
      let newText: string;
      let replaceAll: boolean;
      try {
        path = requireString(args, "path");
        oldText = requireString(args, "old_text");
        newText = requireString(args, "new_text", { allowEmpty: true });
        replaceAll = optionalBoolean(args, "replace_all") ?? false;
      } catch (error) {
        if (error instanceof ToolArgError) return { ok: false, output: `edit_file: ${error.message}` };
        throw error;
      }
      if (oldText === newText)
        return { ok: false, output: "edit_file: old_text and new_text are the same; nothing to change" };
      const resolved = await resolveToolPath(context, path, "edit_file");
      if (!resolved.ok) return { ok: false, output: resolved.error };
      const absolute = resolved.path;
      let text: string;
      try {
        text = await readFile(absolute, { encoding: "utf8", signal: context.signal });
      } catch (error) {
        return { ok: false, output: describeFsError(error, path) };
      }
      const positions = occurrences(text, oldText);
      if (positions.length === 0) {
        return {
          ok: false,
          output: `old_text was not found in ${path}; read the file again and copy the text exactly (whitespace and indentation count)`,
        };
      }
      if (positions.length > 1 && !replaceAll) {
        return {
          ok: false,
          output: `old_text occurs ${positions.length} times in ${path}; include more surrounding lines to make it unique, or set replace_all to true`,
        };
      }
      const edited = spliceAll(text, positions, oldText.length, newText);
      try {
        await writeFile(absolute, edited, { encoding: "utf8", signal: context.signal });
      } catch (error) {
        return { ok: false, output: describeFsError(error, path) };
      }
      const count = positions.length;
      return { ok: true, output: `edited ${path}: replaced ${count} occurrence${count === 1 ? "" : "s"}` };
    },
  };
}

/** Start indexes of the non-overlapping occurrences of `needle`, left to right. */
export function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length))
    found.push(at);
  return found;
}

function spliceAll(text: string, positions: number[], length: number, replacement: string): string {
  let out = "";
  let from = 0;
  for (const at of positions) {
    out += text.slice(from, at) + replacement;
    from = at + length;
  }
  return out + text.slice(from);
}
