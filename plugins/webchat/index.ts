import { randomBytes } from "node:crypto";
import {
  definePlugin,
  type HttpHandler,
  PLUGIN_API_VERSION,
  type PluginContext,
} from "../../src/plugin-api/index.js";
import { loadMarkdownAsset, markdownAssetHandler } from "./markdown-asset.js";
import { pageSecurityPolicy, renderPage } from "./page.js";
import { pageInfo, pageInfoHandler } from "./page-info.js";
import { shouldEmbedToken } from "./should-embed-token.js";

/**
 * `GET /`: the web chat page. Public (no token needed to load it); the page carries the gateway token only for a
 * browser on this machine (see shouldEmbedToken) and is never cached, so the token is not left on disk by a cache.
 */
export function webchatPageHandler(
  context: Pick<PluginContext, "gatewayToken">,
  markdownScript: string,
): HttpHandler {
  return (req, res) => {
    const nonce = randomBytes(16).toString("base64");
    const token = shouldEmbedToken(req) ? context.gatewayToken : undefined;
    const html = renderPage({ nonce, markdownScript, ...(token === undefined ? {} : { token }) });
    res.writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": pageSecurityPolicy(nonce),
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
    });
    res.end(html);
  };
}

/**
 * The local web chat. Not a transport: the page talks to the gateway's HTTP API (`/api/*`) and gets its
 * replies in the HTTP response and through `/api/events`, so the gateway never has to deliver to it.
 * Routes: `GET /` (the page, public), `GET /webchat/markdown-it-<version>.js` (public), `GET /webchat/info`.
 */
export default definePlugin({
  apiVersion: PLUGIN_API_VERSION,
  id: "webchat",
  version: "1.0.0",
  async create(context) {
    const markdown = await loadMarkdownAsset();
    context.http.route("GET", "/", webchatPageHandler(context, markdown.path), { auth: false });
    context.http.route("GET", markdown.path, markdownAssetHandler(markdown), { auth: false });
    context.http.route("GET", "/webchat/info", pageInfoHandler(pageInfo(context, process.env)));
    return {};
  },
});
