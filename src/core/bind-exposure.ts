import { BlockList, isIP } from "node:net";

/**
 * What `gateway.bind` exposes, decided from the configured string alone (no DNS, no network). Pure.
 *
 * Contract:
 * - Loopback binds get no warning: `localhost` (any case, with or without a trailing dot), any address in
 *   127.0.0.0/8, and `::1` in any spelling (`0:0:0:0:0:0:0:1`, `::ffff:127.0.0.1`).
 * - Every other bind gets one warning line for the start-up log: the wildcards (`0.0.0.0`, `::`) listen on every
 *   interface, any other address on the network that address belongs to, and any other host name on whatever
 *   address it resolves to. The gateway still starts: the warning says what is exposed and how to avoid it.
 */
export interface BindExposure {
  /** One line to log at level warn when the bind is not loopback; undefined for loopback. */
  warning?: string;
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");

const WILDCARD = new BlockList();
WILDCARD.addAddress("0.0.0.0", "ipv4");
WILDCARD.addAddress("::", "ipv6");

const EXPOSED =
  "the API, the web chat and webhooks are reachable from the network, protected only by bearer tokens over " +
  "plain HTTP (readable by anyone on the path) and with no rate limit";
const ADVICE =
  "unless you mean it, set it to 127.0.0.1 and reach the gateway through an SSH tunnel, a VPN or an HTTPS " +
  "reverse proxy";

export function bindExposure(bind: string): BindExposure {
  const family = isIP(bind);
  if (family === 0) {
    if (/^localhost\.?$/i.test(bind)) return {};
    return {
      warning: `gateway.bind is ${JSON.stringify(bind)}, a host name other than localhost: ${EXPOSED}; ${ADVICE}`,
    };
  }
  const type = family === 6 ? "ipv6" : "ipv4";
  if (LOOPBACK.check(bind, type)) return {};
  if (WILDCARD.check(bind, type)) {
    return { warning: `gateway.bind is ${bind} (every network interface): ${EXPOSED}; ${ADVICE}` };
  }
  return { warning: `gateway.bind is ${bind}, not a loopback address: ${EXPOSED}; ${ADVICE}` };
}
