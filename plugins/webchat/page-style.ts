/**
 * The page's CSS: plain, readable, light and dark. No external fonts or images. Text on the accent colour
 * (`--accent-fg` on `--accent`: the Send button) keeps WCAG AA contrast, 4.5:1, in both schemes.
 */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --bg: #fafafa; --fg: #1d1d1f; --muted: #6e6e73; --user: #dcebff;
  --assistant: #ffffff; --tool: #f1f1f4; --notice: #fff6d6; --border: #d6d6db; --accent: #0a61d1;
  --accent-fg: #ffffff; --link: #0a61d1; --warn: #a3400b; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #161618; --fg: #ececf0; --muted: #9a9aa2; --user: #1f3553; --assistant: #222226;
    --tool: #1c1c20; --notice: #3a3215; --border: #3a3a40; --accent: #6aa6ff; --accent-fg: #0b1526;
    --link: #8dbbff; --warn: #ffb07a; }
}
[hidden] { display: none !important; }
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; padding: 8px 16px;
  border-bottom: 1px solid var(--border); }
#model[data-configured="false"] { color: var(--warn); }
#context { display: inline-flex; gap: 6px; align-items: center; }
#context meter { width: 72px; height: 8px; }
h1 { font-size: 16px; margin: 0; }
#conn { margin-left: auto; }
#search-form input { font: inherit; font-size: 13px; padding: 2px 6px; width: 14em; }
#search-results { max-height: 40vh; overflow-y: auto; padding: 8px 16px; border-bottom: 1px solid var(--border);
  display: flex; flex-direction: column; gap: 6px; }
#search-results .hit { display: block; color: inherit; text-decoration: none; padding: 4px 8px; border-radius: 6px;
  border: 1px solid var(--border); overflow-wrap: anywhere; }
#search-results .hit:hover, #search-results .hit:focus { border-color: var(--accent); }
.msg[data-hit="true"] { outline: 2px solid var(--accent); outline-offset: 2px; }
.muted { color: var(--muted); font-size: 13px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
#token-form { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 16px; }
#token-form p { flex-basis: 100%; margin: 0; }
#token-error { color: #c62828; }
#messages { flex: 1; overflow-y: auto; padding: 16px; display: flex; flex-direction: column; gap: 10px; }
.msg { max-width: min(80ch, 92%); padding: 8px 12px; border-radius: 10px; border: 1px solid var(--border); }
.msg .label { font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.msg .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.msg .text.rich { white-space: normal; }
.rich > :first-child { margin-top: 0; }
.rich > :last-child { margin-bottom: 0; }
.rich p, .rich ul, .rich ol, .rich pre, .rich table, .rich blockquote, .rich h1, .rich h2, .rich h3,
.rich h4, .rich h5, .rich h6 { margin: 0.5em 0; }
.rich h1, .rich h2, .rich h3, .rich h4, .rich h5, .rich h6 { font-size: 1em; }
.rich ul, .rich ol { padding-left: 1.5em; }
.rich code { font: 13px/1.4 ui-monospace, Menlo, Consolas, monospace; background: var(--tool); padding: 0 3px;
  border-radius: 4px; }
.rich pre { background: var(--tool); padding: 8px 10px; border-radius: 6px; overflow-x: auto; white-space: pre; }
.rich pre code { background: none; padding: 0; }
.rich table { border-collapse: collapse; display: block; max-width: 100%; overflow-x: auto; }
.rich th, .rich td { border: 1px solid var(--border); padding: 3px 8px; text-align: left; }
.rich blockquote { border-left: 3px solid var(--border); padding-left: 10px; color: var(--muted); }
.rich a { color: var(--link); }
.msg .cut, .msg .unanswered { margin-top: 6px; font-size: 12px; color: var(--warn); }
.msg.assistant[data-stop-reason] { border-style: dashed; }
#welcome { padding: 24px 16px 0; color: var(--muted); }
#welcome p { margin: 0 0 8px; }
#welcome .welcome-session { color: var(--fg); }
#welcome code { font: 13px/1.4 ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
#welcome pre { background: var(--tool); color: var(--fg); padding: 8px 10px; border-radius: 6px; overflow-x: auto;
  font: 13px/1.4 ui-monospace, Menlo, Consolas, monospace; }
.msg.user { align-self: flex-end; background: var(--user); }
.msg.assistant { align-self: flex-start; background: var(--assistant); }
.msg.assistant[data-streaming="true"] .rich > :last-child::after,
.msg.assistant[data-streaming="true"] .rich:empty::after { content: "▍"; color: var(--muted); }
.msg.notice { align-self: center; background: var(--notice); font-size: 13px; }
.msg.tool { align-self: flex-start; background: var(--tool); font-size: 13px; }
.msg[data-status="failed"] { border-color: #c62828; }
.tool-head code { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.tool-name { font-weight: 600; margin-right: 6px; }
.msg.tool[data-state="failed"] .tool-name { color: #c62828; }
.tool-result pre { margin: 4px 0 0; max-height: 24em; overflow: auto; white-space: pre-wrap;
  font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
#busy { display: flex; gap: 8px; align-items: center; padding: 4px 16px; color: var(--muted); font-size: 13px; }
#busy .dot { width: 8px; height: 8px; border-radius: 50%; background: var(--accent); animation: pulse 1s infinite alternate; }
@keyframes pulse { from { opacity: 0.25; } to { opacity: 1; } }
@media (prefers-reduced-motion: reduce) { #busy .dot { animation: none; } }
#composer { display: flex; gap: 8px; padding: 12px 16px; border-top: 1px solid var(--border); }
#input { flex: 1; resize: vertical; min-height: 2.6em; max-height: 40vh; padding: 8px; font: inherit;
  color: inherit; background: var(--assistant); border: 1px solid var(--border); border-radius: 8px; }
.msg .actions { display: flex; gap: 8px; margin-top: 8px; flex-wrap: wrap; }
button { font: inherit; padding: 6px 16px; border-radius: 8px; border: 1px solid var(--accent);
  background: var(--accent); color: var(--accent-fg); cursor: pointer; }
button:disabled { opacity: 0.5; cursor: default; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
`;
