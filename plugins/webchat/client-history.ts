/**
 * A fragment of the page's script (client-script.ts inlines it inside its closure): the conversation as a whole —
 * filled from `GET /api/history`, and replaced when the session key holds a new session. Uses the script's
 * elements, its state `st`, CLIENT_VIEW and CLIENT_HEADER. Written inside String.raw, so it must contain no backtick
 * and no dollar-brace.
 *
 * Contracts:
 * - every (re)connection of the event stream loads the history; events arriving meanwhile are held, then replayed,
 *   minus messages the history already has;
 * - `st.sessionId` is the session the view shows; a `session` event or a POST answer naming another one replaces
 *   the view with that session's (empty) conversation, whichever arrives first; the other is then a no-op, and so is
 *   a late answer naming a session the view showed before;
 * - replacing the view keeps this tab's messages still being sent (they belong to the new session);
 * - a person's message the history marks `unanswered` (its turn failed) gets a note saying so, with the reason.
 */
// biome-ignore lint/complexity/noUselessStringRaw: raw, so that a "\n" added to the browser code reaches the browser as is
export const CLIENT_HISTORY = String.raw`
  // ---- the conversation as a whole ----
  /** Empties the view but for this tab's messages still being sent; forgets open bubbles and tool cards. */
  function clearView() {
    const unsent = Array.from(messagesEl.querySelectorAll('[data-role="user"][data-status="sending"]'));
    messagesEl.textContent = "";
    st.tools.clear();
    st.open = null;
    st.last = null;
    for (const el of unsent) messagesEl.appendChild(el);
  }
  /** Sessions this view showed before the current one: a late answer from one of them never brings it back. */
  const replaced = new Set();
  /** The key holds another session now (/new, idle expiry): its conversation replaces the old one. */
  function showSession(sessionId) {
    if (!sessionId || sessionId === st.sessionId || replaced.has(sessionId)) return;
    if (st.sessionId) replaced.add(st.sessionId);
    st.sessionId = sessionId;
    clearView();
    updateWelcome();
    refreshHeader();
  }
  /** Why a message went unanswered, from the reason its turn-failed entry gives. */
  function unansweredNote(reason) {
    if (reason === "no model configured") return "Not answered: no model was configured.";
    if (reason === "not taken") return "Not answered: the gateway could not keep this message.";
    return "Not answered: the turn failed (" + reason + ").";
  }
  function markUnanswered(el, reason) {
    el.dataset.unanswered = reason;
    const note = document.createElement("div");
    note.className = "unanswered";
    note.textContent = unansweredNote(reason);
    el.appendChild(note);
  }
  async function loadHistory() {
    st.loading = true;
    st.queue = [];
    let tail = [];
    try {
      const res = await api("/api/history?session=" + encodeURIComponent(st.sessionKey));
      if (res.status === 401) {
        st.loading = false;
        return askToken("The gateway refused this token.");
      }
      const history = await res.json().catch(() => null);
      if (!res.ok || !history) throw new Error(errorText(history, res.status));
      renderHistory(history);
      tail = (history.messages || []).slice(-10);
    } catch (e) {
      bubble("notice", "Could not load the history: " + (e && e.message ? e.message : String(e)), "");
    }
    const held = st.queue;
    st.queue = [];
    st.loading = false;
    for (const [type, d] of held) {
      if (type === "message" && tail.some((m) => m.role === d.role && m.text === d.text)) continue;
      handle(type, d);
    }
    updateWelcome();
    refreshHeader();
    showHit();
    setComposer(true);
    setState("ready");
    if (document.activeElement === document.body) inputEl.focus();
  }
  function renderHistory(history) {
    st.sessionId = history.sessionId || "";
    clearView();
    st.turns.clear();
    for (const m of history.messages || []) {
      if (m.role === "user") {
        const el = bubble("user", m.text || "", userLabel(m));
        el.dataset.entryId = m.id;
        if (typeof m.unanswered === "string") markUnanswered(el, m.unanswered);
      } else if (m.role === "assistant") {
        if (m.text) {
          const el = bubble("assistant", m.text, assistantLabel(m));
          el.dataset.final = "true";
          el.dataset.entryId = m.id;
        }
        for (const c of m.toolCalls || []) toolEl(c.id, c.name, c.arguments, "no result").dataset.state = "unknown";
      } else if (m.role === "tool") toolResult(m.toolCallId, "", true, m.text);
    }
    scrollToEnd();
    updateWelcome();
    updateBusy();
  }
`;
