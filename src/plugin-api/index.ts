/**
 * The one module plugins import. Everything here is the contract between the gateway and its plugins;
 * see docs/plugins.md.
 */
import type { PluginDefinition } from "./types.js";

export { type OutcomeBody, outcomeBody } from "./outcome-body.js";
export * from "./types.js";

/** Declares a plugin. Identity at runtime; it exists for the types and as the marker the loader checks. */
export function definePlugin<C>(definition: PluginDefinition<C>): PluginDefinition<C> {
  return definition;
}

export { type ConfirmingFetchOptions, confirmingFetch } from "./confirming-fetch.js";
export {
  DEFAULT_DOWNLOAD_LIMITS,
  type DownloadLimits,
  type DownloadTimers,
  type DownloadWatch,
  downloadLimits,
  downloadVerdict,
  watchDownload,
} from "./download-deadline.js";
export { createHttpFetch } from "./http-fetch.js";
export { readSse, type SseEvent, SseParser } from "./sse-parse.js";
export { writePrivateFile } from "./write-private-file.js";
