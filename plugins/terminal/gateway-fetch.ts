import { createHttpFetch } from "../../src/plugin-api/index.js";

/**
 * The `fetch` of `clawdis chat` for the gateway's API: `node:http` with a keep-alive agent (the plugin API's
 * `createHttpFetch`), not the built-in fetch, whose first request to a live server compiles undici's HTTP parser
 * (WebAssembly) on a background thread, ~150 ms of CPU on this machine at every `clawdis chat` (docs/benchmarks.md).
 * Its answers are read as a `Response` is: status, headers, `json()`, and the body as `readSse` takes it.
 */
export const gatewayFetch: typeof fetch = createHttpFetch();
