import type { TransportHealth } from "../../src/plugin-api/index.js";
import { formatAge } from "./format-age.js";

/** Where the WhatsApp link is (connection.ts). */
export type LinkState =
  | { kind: "idle" }
  | { kind: "connecting"; attempt: number }
  | { kind: "open"; since: number }
  | { kind: "reconnecting"; attempt: number; at: number; reason: string }
  | { kind: "failed"; message: string }
  | { kind: "stopped" };

/**
 * What `health()` reports for `state`: `ok` ("linked", with when the credentials were last refreshed) only while
 * the socket is open; otherwise `starting` (connecting) or `down` (reconnecting, failed). Pure but for reading
 * `now` and the credentials' save time.
 */
export function linkHealth(
  state: LinkState,
  now: () => number,
  auth: { savedAt(): number | undefined } | undefined,
  account: { readonly ownNumber: string | undefined },
): TransportHealth {
  switch (state.kind) {
    case "idle":
      return { state: "starting", detail: "not started" };
    case "connecting":
      return {
        state: "starting",
        detail: state.attempt > 0 ? `connecting, attempt ${state.attempt + 1}` : "connecting",
      };
    case "open": {
      const savedAt = auth?.savedAt();
      const refreshed =
        savedAt === undefined
          ? "credentials never refreshed"
          : `credentials refreshed ${formatAge(now() - savedAt)} ago`;
      return { state: "ok", detail: `linked as ${account.ownNumber ?? "?"}, ${refreshed}` };
    }
    case "reconnecting": {
      const wait = Math.max(0, state.at - now());
      return {
        state: "down",
        detail: `reconnecting (${state.reason}), attempt ${state.attempt} in ${formatAge(wait)}`,
      };
    }
    case "failed":
      return { state: "down", detail: state.message };
    case "stopped":
      return { state: "stopped" };
  }
}
