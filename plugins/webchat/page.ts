import { CLIENT_SCRIPT } from "./client-script.js";
import { PAGE_STYLE } from "./page-style.js";

export interface PageOptions {
  /** Embedded in `<meta name="clawdis-token">` when present; absent: the page asks for it. */
  token?: string;
  /** The Content-Security-Policy nonce of the inline style and scripts; fresh per response. */
  nonce: string;
  /** Same-origin path of markdown-it's browser build (markdown-asset.ts), loaded with the nonce before the page's script. */
  markdownScript: string;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The Content-Security-Policy the page is served with: only its own inline style and scripts carrying the
 * response's nonce run (the page's script, and markdown-it from the gateway's own route), it talks only to its own
 * origin, loads no image but data: URLs, and no other site may frame it.
 */
export function pageSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The whole web chat: one HTML document (inline CSS and JS, plus markdown-it from the gateway itself; no external
 * URL, no build step). Stable hooks for tests: see README.md ("Test hooks").
 */
export function renderPage(options: PageOptions): string {
  const nonce = escapeHtml(options.nonce);
  const markdownScript = escapeHtml(options.markdownScript);
  const tokenMeta =
    options.token === undefined ? "" : `\n<meta name="clawdis-token" content="${escapeHtml(options.token)}">`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">${tokenMeta}
<title>clawdis</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${PAGE_STYLE}</style>
</head>
<body data-state="loading">
<header>
  <h1>clawdis</h1>
  <span id="session" class="muted"></span>
  <span id="model" class="muted"></span>
  <span id="context" class="muted" hidden><meter id="context-meter" min="0" value="0" aria-label="Context used"></meter>
  <span id="context-text"></span></span>
  <form id="search-form" role="search">
    <label for="search-input" class="visually-hidden">Search every conversation</label>
    <input id="search-input" type="search" placeholder="Search" autocomplete="off" spellcheck="false">
  </form>
  <span id="conn" class="muted" role="status">connecting…</span>
</header>
<nav id="search-results" aria-label="Search results" hidden></nav>
<form id="token-form" hidden>
  <label for="token-input">Gateway token</label>
  <input id="token-input" type="password" autocomplete="off" spellcheck="false" required>
  <button type="submit">Connect</button>
  <p class="muted">It is in <code>gateway.token</code> in the gateway's state directory
  (<code>~/.clawdis</code> unless <code>CLAWDIS_STATE_DIR</code> says otherwise). This browser keeps it.</p>
  <p id="token-error" role="alert"></p>
</form>
<section id="welcome" aria-label="Getting started" hidden></section>
<main id="messages" role="log" aria-live="polite" aria-label="Conversation"></main>
<div id="busy" role="status" hidden><span class="dot" aria-hidden="true"></span><span id="busy-text">Working…</span></div>
<form id="composer">
  <label for="input" class="visually-hidden">Message</label>
  <textarea id="input" rows="2" placeholder="Message — Enter sends, Shift+Enter for a new line" disabled></textarea>
  <button id="send" type="submit" disabled>Send</button>
</form>
<script nonce="${nonce}" src="${markdownScript}"></script>
<script nonce="${nonce}">${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}
