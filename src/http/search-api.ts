import type { Gateway } from "../gateway.js";
import { searchTranscripts } from "../sessions/search.js";
import { parseSearchRequest } from "../sessions/search-request.js";
import type { HttpServer } from "./http-server.js";
import { sendJson } from "./http-server.js";

/**
 * `GET /api/search?q=&regex=1&key=&since=&role=&limit=` (docs/http-api.md): the search of
 * `clawdis sessions search`, answered with the same JSON as its `--json`; 400 with the reason for a bad parameter.
 * The transcripts are read as they are; the search pauses every few MiB so the gateway's other work goes on.
 */
export function registerSearchApi(gateway: Gateway, server: HttpServer): void {
  server.route("GET", "/api/search", async (req, res) => {
    const param = (name: string) => req.query.get(name) ?? undefined;
    const regex = param("regex");
    const options = parseSearchRequest(
      {
        q: param("q") ?? "",
        regex: regex === "1" || regex === "true",
        ...optional("key", param("key")),
        ...optional("since", param("since")),
        ...optional("role", param("role")),
        ...optional("limit", param("limit")),
      },
      gateway.clock.now(),
    );
    if (typeof options === "string") {
      sendJson(res, 400, { error: "bad-request", message: options });
      return;
    }
    // What a reply just written says is in the transcript: the turns that ended are searched.
    await gateway.turnsRecorded();
    const map = await gateway.store.load();
    const report = await searchTranscripts(gateway.store.path, map, {
      ...options,
      pause: () => new Promise((resolve) => setImmediate(resolve)),
    });
    sendJson(res, 200, report);
  });
}

/** `{[name]: value}` for a parameter that was given (an empty one counts as not given). */
function optional(name: string, value: string | undefined): Record<string, string> {
  return value === undefined || value === "" ? {} : { [name]: value };
}
