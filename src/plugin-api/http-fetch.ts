/**
 * A lean `fetch` over `node:http`/`node:https` with a keep-alive agent (string and byte bodies; anything else goes to
 * the built-in fetch): what the gateway's model client uses, for a plugin's SDK that takes a `fetch`
 * (src/agent/http-fetch.ts has the contract).
 */
export { createHttpFetch } from "../agent/http-fetch.js";
