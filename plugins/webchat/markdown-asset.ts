import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { HttpHandler } from "../../src/plugin-api/index.js";

/** markdown-it's browser build, as the page loads it from the gateway (never from a CDN). */
export interface MarkdownAsset {
  /** The route, versioned so that a browser may keep it: `/webchat/markdown-it-<version>.js`. */
  path: string;
  version: string;
  script: string;
}

/**
 * Reads markdown-it's browser build (UMD, defines `window.markdownit`) from node_modules, once at start. Its
 * source-map comment is dropped: the map is not served, and a browser's tools would ask for it.
 * A missing or unreadable build is an error that names the package to reinstall.
 */
export async function loadMarkdownAsset(): Promise<MarkdownAsset> {
  const require = createRequire(import.meta.url);
  try {
    const manifest = JSON.parse(await readFile(require.resolve("markdown-it/package.json"), "utf8")) as {
      version?: unknown;
    };
    const version = typeof manifest.version === "string" ? manifest.version : "unknown";
    const source = await readFile(require.resolve("markdown-it/browser"), "utf8");
    const script = source.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, "\n");
    return { path: `/webchat/markdown-it-${version}.js`, version, script };
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the web chat cannot load markdown-it's browser build (${why}); reinstall the dependencies with npm install`,
      { cause: error },
    );
  }
}

/** Serves the asset: public (a `<script src>` sends no token), cacheable for a year since the path is versioned. */
export function markdownAssetHandler(asset: MarkdownAsset): HttpHandler {
  return (_req, res) => {
    res.writeHead(200, {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    });
    res.end(asset.script);
  };
}
