/**
 * A request's headers as the raw name/value list `node:http` sends as given (no `setHeader` per header), for a
 * request to `url` with `body`: the caller's headers (lower-case names, from `given`), then what Node adds only to
 * headers given as an object: `host`, and basic `authorization` for credentials in the URL, each unless given;
 * `content-length` is always the body's own. Shared by createHttpFetch (http-fetch.ts) and the send thread
 * (runtime/send-thread/send-thread-worker.ts), which loads nothing but Node's own modules and this file.
 */
export function wireHeaders(
  url: URL,
  given: (each: (name: string, value: string) => void) => void,
  body: string | Uint8Array | undefined,
): string[] {
  const headers: string[] = [];
  let host = false;
  let authorization = false;
  given((name, value) => {
    if (name === "host") host = true;
    if (name === "authorization") authorization = true;
    if (name !== "content-length") headers.push(name, value);
  });
  if (!host) headers.push("host", url.host);
  if ((url.username || url.password) && !authorization) {
    const auth = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.push("authorization", `Basic ${Buffer.from(auth).toString("base64")}`);
  }
  if (body !== undefined) headers.push("content-length", String(Buffer.byteLength(body)));
  return headers;
}
