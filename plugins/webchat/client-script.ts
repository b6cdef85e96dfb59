// Just over 400 lines: the page's one script, assembled from the client-*.ts parts it imports; what is left here is
// the wiring of the page's events, kept in one place so their order reads top to bottom.
import { CLIENT_HEADER } from "./client-header.js";
import { CLIENT_HISTORY } from "./client-history.js";
import { CLIENT_RENDER } from "./client-render.js";
import { CLIENT_SEARCH } from "./client-search.js";
import { CLIENT_VIEW } from "./client-view.js";

/**
 * The web chat's browser code, inlined into the page as it is (no build step). Plain modern JS for Chromium,
 * Firefox and Safari. Written inside String.raw, so it must contain no backtick and no dollar-brace (the
 * interpolations are its fragments: CLIENT_RENDER, CLIENT_VIEW, CLIENT_HEADER).
 *
 * Contract with the gateway (docs/http-api.md): `GET /api/status` gives `mainKey` and the model;
 * `GET /webchat/info` the context window and the config path; `GET /api/history` fills the view (client-history.ts);
 * `GET /api/events` (EventSource, token in the query) streams the session; `POST /api/agent` sends;
 * `GET /api/sessions` gives the context in use for the gauge and the session's title; `GET /api/search` the search box (client-search.ts).
 * The page shows the primary session, or the one its address names (`/?session=<key>`: what a search hit opens),
 * and sends to that session.
 *
 * Invariants:
 * - nothing from the gateway or the model becomes markup except an assistant reply rendered by markdown-it with
 *   raw HTML off (client-render.ts); every other text is set through textContent;
 * - a reply is shown once, in one bubble, in every tab: the bubble that streamed it (`delta`) stays open past
 *   `turn-end` when the turn ended with the whole reply, and the `message` event that follows finalizes that same
 *   bubble (either order of the two events works). Other stop reasons close it with a mark (`data-stop-reason`).
 *   The POST response only fills in what no event showed (`recentShown`), and its texts are remembered
 *   (`expectEcho`) so a late event does not show them again;
 * - events that arrive while the history loads are held and replayed after it, minus messages it already has;
 * - sending scrolls to the person's own message, wherever the view was; otherwise the view follows new content
 *   only while it is at the bottom.
 */
export const CLIENT_SCRIPT = String.raw`
(() => {
  "use strict";
${CLIENT_RENDER}
  const TOKEN_KEY = "clawdis.token";
  const EVENT_TYPES = ["message", "turn-start", "turn-end", "delta", "tool-call", "tool-result", "notice", "session"];
  /** Stop reasons whose payload is the agent's own reply; any other payload is a gateway notice. */
  const REPLY_REASONS = ["end", "tool-loop"];
  /** After a final reply in a session without a title: this many more reads of its row, this far apart. */
  const TITLE_CHECKS = 6;
  const TITLE_RECHECK_MS = 2000;
  const byId = (id) => document.getElementById(id);
  const messagesEl = byId("messages");
  const inputEl = byId("input");
  const sendEl = byId("send");
  const busyEl = byId("busy");
  const busyText = byId("busy-text");
  const connEl = byId("conn");
  const sessionEl = byId("session");
  const modelEl = byId("model");
  const gaugeEl = byId("context");
  const gaugeMeter = byId("context-meter");
  const gaugeText = byId("context-text");
  const welcomeEl = byId("welcome");
  const composer = byId("composer");
  const tokenForm = byId("token-form");
  const tokenInput = byId("token-input");
  const tokenError = byId("token-error");

  function readStored() {
    try { return localStorage.getItem(TOKEN_KEY) || ""; } catch (e) { return ""; }
  }
  function store(token) {
    try {
      if (token) localStorage.setItem(TOKEN_KEY, token);
      else localStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* storage disabled: the token lives until the tab closes */ }
  }
  function uuid() {
    if (window.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 15) | 64;
    b[8] = (b[8] & 63) | 128;
    const h = Array.from(b, (x) => (x + 256).toString(16).slice(1)).join("");
    return [h.slice(0, 8), h.slice(8, 12), h.slice(12, 16), h.slice(16, 20), h.slice(20)].join("-");
  }

  const metaToken = document.querySelector('meta[name="clawdis-token"]');
  const embedded = metaToken ? metaToken.getAttribute("content") || "" : "";
  const st = {
    token: embedded || readStored(),
    chatId: "webchat-" + uuid(),
    sessionKey: "",
    /** The primary session's key (from /api/status): the page's session unless ?session= names another. */
    mainKey: "",
    /** The session the view shows (from the history; a session event or a POST answer may replace it). */
    sessionId: "",
    model: null,
    configPath: "",
    contextWindow: 0,
    gauge: { busy: false, again: false },
    /** The session's title as last read ("" while it has none), and the reads still to make while it has none. */
    title: "",
    titleChecks: 0,
    titleTimer: 0,
    source: null,
    loading: false,
    queue: [],
    turns: new Set(),
    pendingSends: 0,
    open: null,
    last: null,
    tools: new Map(),
    recentShown: [],
    expectEcho: [],
    retry: 0,
    retryTimer: 0,
  };

${CLIENT_VIEW}
${CLIENT_HEADER}
${CLIENT_HISTORY}
${CLIENT_SEARCH}
  // ---- events ----
  function closeOpen() {
    if (!st.open) return;
    st.open.el.dataset.streaming = "false";
    st.open = null;
  }
  function onDelta(d) {
    if (!st.open || st.open.turnId !== d.turnId) {
      closeOpen();
      const el = bubble("assistant", "", "Assistant");
      el.dataset.streaming = "true";
      el.dataset.turnId = d.turnId;
      st.open = { el, turnId: d.turnId };
      st.last = { el, final: false, consumed: false };
    }
    setText(st.open.el, textOf(st.open.el) + d.text);
  }
  function onUser(d) {
    if (isOurs(d)) {
      const mine = messagesEl.querySelector('[data-role="user"][data-status="sending"]');
      if (mine) mine.dataset.status = "accepted";
      return;
    }
    bubble("user", d.text, userLabel(d));
  }
  function onAssistant(d) {
    const ours = isOurs(d);
    if (ours && takeText(st.expectEcho, d.text)) {
      // The POST response showed this reply already; a bubble still streaming is a late copy of it.
      if (st.open && st.last && st.open.el === st.last.el && st.last.consumed) closeOpen();
      else if (st.open) { st.open.el.remove(); st.open = null; }
      return;
    }
    let el;
    if (st.open) {
      el = st.open.el;
      closeOpen();
      setText(el, d.text);
      setLabel(el, assistantLabel(d));
    } else {
      el = bubble("assistant", d.text, assistantLabel(d));
    }
    el.dataset.final = "true";
    st.last = { el, final: true, consumed: false };
    if (ours && st.pendingSends > 0) remember(st.recentShown, d.text);
    if (!st.title) st.titleChecks = TITLE_CHECKS;
    refreshHeader();
  }
  /**
   * The turn is over. Ended with the whole reply ("end"): its bubble stays the one bubble of the reply and the
   * final message event (sent after turn-end) fills it in. Any other reason: the bubble is closed and marked.
   */
  function onTurnEnd(d) {
    st.turns.delete(d.turnId);
    const open = st.open;
    if (open && open.turnId === d.turnId) {
      if (d.stopReason === "end") open.el.dataset.streaming = "false";
      else {
        markCut(open.el, d.stopReason);
        closeOpen();
      }
    }
    if (d.stopReason !== "end") refreshHeader();
  }
  function onNotice(d) {
    refreshHeader();
    // An approval decided: its buttons go, even when the note itself was shown already.
    if (d.closesButtons) document.querySelectorAll('[data-role="approval-buttons"]').forEach((b) => b.remove());
    if (takeText(st.expectEcho, d.text)) return;
    const el = bubble("notice", d.text, "");
    if (Array.isArray(d.buttons) && d.buttons.length > 0) approvalButtons(el, d.buttons);
    if (st.pendingSends > 0) remember(st.recentShown, d.text);
  }
  /** An approval's buttons under its prompt: a press sends the button's text as the person's message. */
  function approvalButtons(el, buttons) {
    const row = document.createElement("div");
    row.className = "actions";
    row.dataset.role = "approval-buttons";
    for (const b of buttons) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = String(b.text);
      button.addEventListener("click", () => {
        inputEl.value = String(b.data);
        void send();
      });
      row.appendChild(button);
    }
    el.appendChild(row);
  }
  function handle(type, d) {
    if (type === "message") return d.role === "user" ? onUser(d) : onAssistant(d);
    if (type === "delta") return onDelta(d);
    if (type === "tool-call") {
      closeOpen();
      toolEl(d.callId, d.name, d.arguments, "running\u2026");
      return;
    }
    if (type === "tool-result") return toolResult(d.callId, d.name, d.ok, d.output);
    if (type === "notice") return onNotice(d);
    if (type === "session") return showSession(d.sessionId);
    if (type === "turn-start") st.turns.add(d.turnId);
    if (type === "turn-end") onTurnEnd(d);
    updateBusy();
  }
  function onRaw(type, raw) {
    let d;
    try { d = JSON.parse(raw); } catch (e) { return; }
    if (!d || (d.sessionKey && d.sessionKey !== st.sessionKey)) return;
    if (st.loading) st.queue.push([type, d]);
    else handle(type, d);
  }

  // ---- gateway ----
  function api(path, init) {
    const headers = Object.assign({}, init && init.headers, { authorization: "Bearer " + st.token });
    return fetch(path, Object.assign({}, init, { headers, cache: "no-store" }));
  }
  function errorText(body, status) {
    return body && (body.message || body.error) ? String(body.message || body.error) : "HTTP " + status;
  }
  function stopEvents() {
    if (st.source) st.source.close();
    st.source = null;
  }
  function askToken(message) {
    stopEvents();
    clearTimeout(st.retryTimer);
    if (st.token && st.token === readStored()) store("");
    st.token = "";
    setComposer(false);
    setConn("not connected");
    tokenForm.hidden = false;
    tokenError.textContent = message;
    setState("token");
    tokenInput.focus();
  }
  function retryLater(message) {
    stopEvents();
    setComposer(false);
    setState("error");
    const delay = Math.min(30000, 1000 * 2 ** st.retry);
    st.retry += 1;
    setConn(message + " Retrying in " + Math.round(delay / 1000) + " s\u2026");
    clearTimeout(st.retryTimer);
    st.retryTimer = setTimeout(start, delay);
  }
  async function start() {
    if (!st.token) return askToken("");
    tokenForm.hidden = true;
    setConn("connecting\u2026");
    let res;
    try {
      res = await api("/api/status");
    } catch (e) {
      return retryLater("The gateway is not reachable.");
    }
    if (res.status === 401) return askToken("The gateway refused this token.");
    const status = await res.json().catch(() => null);
    if (!res.ok || !status || typeof status.mainKey !== "string" || !status.mainKey) {
      return retryLater("The gateway's status is unusable (" + errorText(status, res.status) + ").");
    }
    st.mainKey = status.mainKey;
    st.sessionKey = new URLSearchParams(location.search).get("session") || status.mainKey;
    st.model = status.model && typeof status.model === "object" ? status.model : null;
    if (typeof status.configPath === "string") st.configPath = status.configPath;
    sessionEl.textContent = "session " + st.sessionKey;
    showModel();
    await loadInfo();
    connect();
  }
  /** The context window and the config path (GET /webchat/info); without them there is no gauge, nothing else. */
  async function loadInfo() {
    try {
      const res = await api("/webchat/info");
      const info = res.ok ? await res.json().catch(() => null) : null;
      if (!info) return;
      if (typeof info.contextWindow === "number" && info.contextWindow > 0) st.contextWindow = info.contextWindow;
      if (!st.configPath && typeof info.configPath === "string") st.configPath = info.configPath;
    } catch (e) {
      /* the gateway went away: connect() notices and retries */
    }
  }
  function connect() {
    stopEvents();
    // The page's own ?filter= (e.g. /?filter=text,toolCalls) is passed to the event stream as it is; lifecycle
    // events always arrive, so the busy indicator still ends with each turn.
    const filter = new URLSearchParams(location.search).get("filter");
    const url =
      "/api/events?session=" + encodeURIComponent(st.sessionKey) + "&token=" + encodeURIComponent(st.token) +
      (filter ? "&filter=" + encodeURIComponent(filter) : "");
    const source = new EventSource(url);
    st.source = source;
    for (const type of EVENT_TYPES) source.addEventListener(type, (e) => onRaw(type, e.data));
    source.onopen = () => {
      st.retry = 0;
      setConn("connected");
      loadHistory();
    };
    source.onerror = () => {
      if (st.source !== source) return;
      if (source.readyState === EventSource.CLOSED) retryLater("Lost the gateway.");
      else setConn("reconnecting\u2026");
    };
  }
  // ---- sending ----
  async function send() {
    const text = inputEl.value;
    if (inputEl.disabled || !text.trim()) return;
    inputEl.value = "";
    const el = bubble("user", text, "You");
    el.dataset.status = "sending";
    // A chat command (/new, /status): not part of the conversation, so the empty view stays up beside it.
    if (text.trim().startsWith("/")) el.dataset.command = "true";
    st.pendingSends += 1;
    updateBusy();
    scrollToEnd();
    try {
      const res = await api("/api/agent", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(Object.assign(
          { message: text, channel: "webchat", chatId: st.chatId, messageId: uuid() },
          st.sessionKey !== st.mainKey ? { session: st.sessionKey } : {},
        )),
      });
      const body = await res.json().catch(() => null);
      if (res.ok) {
        // Answered in another session (/new): its view first, before this message stops counting as unsent.
        if (body && body.meta && typeof body.meta.sessionId === "string") showSession(body.meta.sessionId);
        el.dataset.status = "answered";
        showReply(body);
      } else if (res.status === 409) {
        el.dataset.status = "answered";
      } else {
        el.dataset.status = "failed";
        if (!inputEl.value) inputEl.value = text;
        if (res.status === 401) askToken("The gateway refused this token.");
        else bubble("notice", "Not sent: " + errorText(body, res.status), "");
      }
    } catch (e) {
      el.dataset.status = "failed";
      if (!inputEl.value) inputEl.value = text;
      bubble("notice", "The gateway is not reachable: " + (e && e.message ? e.message : String(e)), "");
    } finally {
      st.pendingSends -= 1;
      if (st.pendingSends === 0) st.recentShown.length = 0;
      updateBusy();
      refreshHeader();
    }
  }
  /** Fills in what the events did not show (a missed event, a command's answer). */
  function showReply(body) {
    const payloads = (body && body.payloads) || [];
    const reason = body && body.meta ? body.meta.stopReason : "end";
    const role = REPLY_REASONS.indexOf(reason) >= 0 ? "assistant" : "notice";
    for (const p of payloads) {
      const text = p && typeof p.text === "string" ? p.text : "";
      if (!text || takeText(st.recentShown, text)) continue;
      const last = st.last;
      if (role === "assistant" && last && !last.final && !last.consumed && text.startsWith(textOf(last.el))) {
        setText(last.el, text);
        last.el.dataset.final = "true";
        last.consumed = true;
      } else {
        const el = bubble(role, text, role === "assistant" ? "Assistant" : "");
        if (role === "assistant") {
          el.dataset.final = "true";
          st.last = { el, final: true, consumed: true };
        }
      }
      remember(st.expectEcho, text);
    }
  }

  composer.addEventListener("submit", (e) => {
    e.preventDefault();
    send();
  });
  inputEl.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  });
  tokenForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const token = tokenInput.value.trim();
    if (!token) return;
    tokenInput.value = "";
    st.token = token;
    store(token);
    st.retry = 0;
    start();
  });
  start();
})();
`;
