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

/**
 * `api` for one request that calls `confirmed` the moment the Bot API answers it with status 200, before grammY
 * reads the answer (Transport.send's `confirmed`: the core records the delivery in it). The Bot API answers 200
 * only when it took the request (`ok: true`); every refusal has the status of its error code. Cheap: a grammY
 * `Api` is a few objects, and the HTTP client and its connections are `api`'s.
 */
export function confirmingApi(api: Api, confirmed: () => void): Api {
  const fetch = api.options?.fetch ?? globalThis.fetch;
  const confirming: typeof globalThis.fetch = async (input, init) => {
    const answer = await fetch(input, init);
    if (answer.status === 200) confirmed();
    return answer;
  };
  return new Api(api.token, { ...api.options, fetch: confirming });
}
