import { Api } from "grammy";
import { confirmingFetch } from "../../src/plugin-api/confirming-fetch.js";
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

/**
 * `api` for one request that calls `confirmed` the moment the Bot API answers it with status 200, before grammY
 * reads the answer (Transport.send's `confirmed`: the core records the delivery in it), made on the gateway's send
 * thread when it can (confirmingFetch: the delivery is recorded there, off the main thread's event loop). The Bot
 * API answers 200 only when it took the request (`ok: true`); every refusal has the status of its error code.
 * Cheap: a grammY `Api` is a few objects, and the HTTP client and its connections are `api`'s.
 */
export function confirmingApi(api: Api, confirmed: () => void): Api {
  const fetch = confirmingFetch(confirmed, {
    takenStatus: 200,
    ...(api.options?.fetch ? { fetch: api.options.fetch } : {}),
  });
  return new Api(api.token, { ...api.options, fetch });
}
