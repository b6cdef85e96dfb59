import type { ClawdisConfig } from "./config-schema.js";

/**
 * The one warning line for `"*"` in `inbound.allowFrom` (anyone may write), given at start and again when a config
 * change applied live introduces it. Undefined when the list has no `"*"`. Pure.
 */
export function allowFromWarning(config: {
  inbound: Pick<ClawdisConfig["inbound"], "allowFrom">;
}): string | undefined {
  return config.inbound.allowFrom.includes("*")
    ? 'inbound.allowFrom contains "*": anyone who can message this WhatsApp account can talk to the agent'
    : undefined;
}
