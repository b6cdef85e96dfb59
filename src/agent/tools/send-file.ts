import { stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { AttachmentKind, ToolDefinition } from "../../plugin-api/types.js";
import { describeFsError, requireString, ToolArgError } from "./tool-args.js";
import { resolveToolPath } from "./tool-path.js";

/** The largest file `send_file` attaches (chat apps refuse larger ones anyway). */
export const MAX_SEND_FILE_BYTES = 50 * 1024 * 1024;

const KIND_BY_EXTENSION: Record<string, AttachmentKind> = {
  ".png": "image",
  ".jpg": "image",
  ".jpeg": "image",
  ".gif": "image",
  ".webp": "image",
  ".mp3": "audio",
  ".m4a": "audio",
  ".wav": "audio",
  ".ogg": "voice",
  ".oga": "voice",
  ".opus": "voice",
  ".mp4": "video",
  ".mov": "video",
  ".webm": "video",
};

/** The kind of attachment a file is sent as, from its extension (anything else: a document). Pure. */
export function attachmentKindOf(path: string): AttachmentKind {
  return KIND_BY_EXTENSION[extname(path).toLowerCase()] ?? "document";
}

/**
 * `send_file`: attaches a file to the reply of this turn; the transport sends it as a photo, audio or document
 * with the reply (a transport that cannot send files gets its name in the text). The file must exist, be a
 * regular file and at most MAX_SEND_FILE_BYTES.
 */
export function sendFileTool(): ToolDefinition {
  return {
    name: "send_file",
    description:
      "Send a file to the person with your reply (an image is shown as a photo, anything else as a document). " +
      "Relative paths are resolved against the working directory.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "The file to send." },
        caption: { type: "string", description: "A short caption shown with the file." },
      },
      required: ["path"],
      additionalProperties: false,
    },
    async execute(args, context) {
      let path: string;
      let caption: string | undefined;
      try {
        path = requireString(args, "path");
        caption = typeof args.caption === "string" && args.caption.length > 0 ? args.caption : undefined;
      } catch (error) {
        if (error instanceof ToolArgError) return { ok: false, output: `send_file: ${error.message}` };
        throw error;
      }
      if (!context.attach) return { ok: false, output: "send_file: this chat cannot receive files" };
      const resolved = await resolveToolPath(context, path, "send_file");
      if (!resolved.ok) return { ok: false, output: resolved.error };
      const absolute = resolved.path;
      try {
        const info = await stat(absolute);
        if (!info.isFile()) return { ok: false, output: `send_file: ${path} is not a regular file` };
        if (info.size > MAX_SEND_FILE_BYTES) {
          return {
            ok: false,
            output: `send_file: ${path} is ${info.size} bytes; at most ${MAX_SEND_FILE_BYTES}`,
          };
        }
        const kind = attachmentKindOf(absolute);
        context.attach({
          kind,
          path: absolute,
          fileName: basename(absolute),
          ...(caption ? { caption } : {}),
        });
        return { ok: true, output: `${path} (${kind}, ${info.size} bytes) will be sent with your reply` };
      } catch (error) {
        return { ok: false, output: describeFsError(error, path) };
      }
    },
  };
}
