import { z } from "zod";

/**
 * The schema of the webhook plugin's config section, `webhooks` (config.ts declares the section): loaded only when
 * a config is validated, never on the gateway's way to listening.
 */

export const hookSchema = z.strictObject({
  /** Session key the hook's input goes to; default the primary session. */
  session: z.string().min(1).optional(),
  /** Bearer token for this hook; default the gateway token. */
  token: z.string().min(8).optional(),
  /** Tools the agent may use on this hook's input (names, or "*"); default none: hook input is untrusted. */
  tools: z.array(z.string().min(1)).default([]),
});

export const webhooksSchema = z
  .record(
    z.string().regex(/^[a-z0-9-]{1,64}$/, "a name of 1 to 64 lowercase letters, digits or '-'"),
    hookSchema,
  )
  .default({});

export type WebhooksConfig = z.infer<typeof webhooksSchema>;
