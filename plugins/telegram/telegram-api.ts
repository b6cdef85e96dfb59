import { Api } from "grammy";
import { createHttpFetch } from "../../src/plugin-api/http-fetch.js";

/**
 * grammY's Bot API client for `token` at `apiRoot`, through the gateway's lean HTTP client (createHttpFetch) rather
 * than grammY's node-fetch: a reply's answer is read, and its delivery recorded, in fewer steps after it arrives
 * (the window in which a kill -9 sends it again, issue 30), at less CPU per call. Uploads (a stream body) go to
 * Node's own fetch.
 */
export function telegramApi(token: string, apiRoot: string): Api {
  return new Api(token, { apiRoot, fetch: createHttpFetch() });
}
