import type { HttpRequest } from "../../src/plugin-api/index.js";

/**
 * Whether a socket's remote address is this machine: 127.0.0.0/8, ::1, or their IPv4-mapped IPv6 forms.
 * Re-implemented here on purpose: plugins import only src/plugin-api.
 */
export function isLoopbackAddress(address: string): boolean {
  const a = address.trim().toLowerCase();
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true;
  const v4 = a.startsWith("::ffff:") ? a.slice("::ffff:".length) : a;
  const match = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(v4);
  return match?.slice(1).every((part) => Number(part) <= 255) ?? false;
}

/**
 * Whether a `Host` header names this machine: `localhost`, `*.localhost`, `127.x.x.x` or `[::1]`, any port.
 * A page fetched under any other name could be a DNS-rebinding attack (a web site whose name resolves to
 * 127.0.0.1): the browser would hand that site the page, and with it the token.
 */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  let name: string;
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    if (end < 0) return false;
    name = h.slice(1, end);
    return name === "::1" || name === "0:0:0:0:0:0:0:1";
  }
  const colon = h.indexOf(":");
  name = colon < 0 ? h : h.slice(0, colon);
  if (name.endsWith(".")) name = name.slice(0, -1);
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  return isLoopbackAddress(name);
}

function header(headers: HttpRequest["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The one decision about the token: the page embeds it only for a browser on this machine that asked for it
 * under a loopback name, and never through a proxy (a proxy on this machine makes every visitor look local).
 * Anyone else gets the page without it and is asked for the token.
 */
export function shouldEmbedToken(request: Pick<HttpRequest, "remoteAddress" | "headers">): boolean {
  const { headers } = request;
  if (
    header(headers, "forwarded") !== undefined ||
    header(headers, "x-forwarded-for") !== undefined ||
    header(headers, "x-real-ip") !== undefined
  ) {
    return false;
  }
  return isLoopbackAddress(request.remoteAddress) && isLoopbackHost(header(headers, "host"));
}
