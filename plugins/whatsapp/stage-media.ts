import { join } from "node:path";
import type { WAMessage, WASocket } from "@whiskeysockets/baileys";
import {
  type Attachment,
  type DownloadTimers,
  downloadLimits,
  type PluginContext,
  writePrivateFile,
} from "../../src/plugin-api/index.js";
import { baileysLogger } from "./baileys-logger.js";
import type { WhatsappConfig } from "./config.js";
import { downloadMedia } from "./download-media.js";
import type { MediaInfo } from "./to-inbound.js";

/**
 * Downloads a message's media into the staging area, within `whatsapp.mediaMaxMb` and its deadline
 * (`whatsapp.mediaTimeoutSeconds`, and at least 4 KB/s); a failure is a note.
 */
export async function stageMedia(
  msg: WAMessage,
  media: MediaInfo,
  sock: Pick<WASocket, "updateMediaMessage">,
  context: PluginContext<WhatsappConfig>,
  timers: DownloadTimers | undefined,
): Promise<Attachment> {
  const { config } = context;
  const maxBytes = config.mediaMaxMb * 1024 * 1024;
  const tooLarge = `larger than whatsapp.mediaMaxMb (${config.mediaMaxMb} MB)`;
  if (media.sizeBytes !== undefined && media.sizeBytes > maxBytes) return { ...media, note: tooLarge };
  try {
    const result = await downloadMedia(msg, {
      maxBytes,
      limits: downloadLimits(config.mediaTimeoutSeconds),
      ...(timers ? { timers: timers } : {}),
      context: { reuploadRequest: sock.updateMediaMessage, logger: baileysLogger(context.logger) },
    });
    if (!result.ok) {
      if (result.why === "timed-out")
        context.logger.warn("WhatsApp media download gave up", { reason: result.note });
      return { ...media, note: result.why === "too-large" ? tooLarge : result.note };
    }
    const data = result.data;
    const name = safeFileName(media.fileName ?? `${media.kind}${extensionOf(media.mimeType)}`);
    const path = join(context.stagingDir, `${msg.key?.id ?? "media"}-${name}`);
    await writePrivateFile(path, data);
    return { ...media, path, sizeBytes: data.length };
  } catch (error) {
    context.logger.warn("WhatsApp media could not be downloaded", { error: String(error) });
    return { ...media, note: `could not be downloaded from WhatsApp (${String(error)})` };
  }
}

function safeFileName(name: string): string {
  const cleaned = name
    .replace(/[/\\\0]/g, "_")
    .replace(/^\.+/, "_")
    .slice(0, 120);
  return cleaned === "" ? "file" : cleaned;
}

function extensionOf(mimeType: string | undefined): string {
  const sub = mimeType?.split(";")[0]?.split("/")[1];
  return sub && /^[a-z0-9.+-]{1,10}$/i.test(sub) ? `.${sub.replace("+xml", "").replace("mpeg", "mp3")}` : "";
}
