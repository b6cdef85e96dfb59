/** The page's CSS: plain, readable, light and dark. No external fonts or images. */
export const PAGE_STYLE = `
:root { color-scheme: light dark; --bg: #fafafa; --fg: #1d1d1f; --muted: #6e6e73; --user: #dcebff;
  --assistant: #ffffff; --tool: #f1f1f4; --notice: #fff6d6; --border: #d6d6db; --accent: #0a61d1; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #161618; --fg: #ececf0; --muted: #9a9aa2; --user: #1f3553; --assistant: #222226;
    --tool: #1c1c20; --notice: #3a3215; --border: #3a3a40; --accent: #6aa6ff; }
}
[hidden] { display: none !important; }
* { box-sizing: border-box; }
html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { display: flex; gap: 12px; align-items: baseline; padding: 8px 16px; border-bottom: 1px solid var(--border); }
h1 { font-size: 16px; margin: 0; }
#conn { margin-left: auto; }
.muted { color: var(--muted); font-size: 13px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
#token-form { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; padding: 16px; }
#token-form p { flex-basis: 100%; margin: 0; }
#token-error { color: #c62828; }
#messages { flex: 1; overflow-y: auto; padding: 16px; display: flex; flex-direction: column; gap: 10px; }
.msg { max-width: min(80ch, 92%); padding: 8px 12px; border-radius: 10px; border: 1px solid var(--border); }
.msg .label { font-size: 12px; color: var(--muted); margin-bottom: 2px; }
.msg .text { white-space: pre-wrap; overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; background: var(--user); }
.msg.assistant { align-self: flex-start; background: var(--assistant); }
.msg.assistant[data-streaming="true"] .text::after { content: "▍"; color: var(--muted); }
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
button { font: inherit; padding: 6px 16px; border-radius: 8px; border: 1px solid var(--accent);
  background: var(--accent); color: #fff; cursor: pointer; }
button:disabled { opacity: 0.5; cursor: default; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
`;
