/**
 * A fragment of the page's script (client-script.ts inlines it inside its closure): the conversation view.
 * Uses the script's elements (`messagesEl`, `busyEl`, …), its state `st` and CLIENT_RENDER. Written inside
 * String.raw, so it must contain no backtick and no dollar-brace.
 *
 * Contracts: a view at the bottom stays at the bottom when something is added or resized, a view scrolled up
 * stays where it is; each bubble keeps its source text (`textOf`), an assistant bubble shows it rendered;
 * labels name the app a message came from unless it is the web chat (any tab: it is the person's own).
 */
export const CLIENT_VIEW = String.raw`
  // ---- view ----
  function setState(name) { document.body.dataset.state = name; }
  function setConn(text) { connEl.textContent = text; }
  function setComposer(enabled) { inputEl.disabled = !enabled; sendEl.disabled = !enabled; }
  /** Showing or hiding the indicator resizes the conversation: a view at the bottom stays at the bottom. */
  function updateBusy() {
    const turn = st.turns.size > 0;
    change(() => {
      busyEl.hidden = !turn && st.pendingSends === 0;
      busyEl.dataset.turn = String(turn);
      busyText.textContent = turn ? "Assistant is working\u2026" : "Waiting for the gateway\u2026";
    });
  }
  function atBottom() { return messagesEl.scrollHeight - messagesEl.scrollTop - messagesEl.clientHeight < 80; }
  function scrollToEnd() { messagesEl.scrollTop = messagesEl.scrollHeight; }
  function change(fn) {
    const stick = atBottom();
    fn();
    if (stick) scrollToEnd();
  }
  function append(el) {
    change(() => messagesEl.appendChild(el));
    updateWelcome();
  }
  /** The source text of each bubble (an assistant bubble shows it rendered). */
  const sources = new WeakMap();
  function write(el, text) {
    sources.set(el, text);
    const target = el.querySelector(".text");
    if (el.dataset.role === "assistant") renderRich(target, text);
    else target.textContent = text;
  }
  function bubble(role, text, label) {
    const el = document.createElement("div");
    el.className = "msg " + role;
    el.dataset.role = role;
    if (label) {
      const l = document.createElement("div");
      l.className = "label";
      l.textContent = label;
      el.appendChild(l);
    }
    const t = document.createElement("div");
    t.className = role === "assistant" ? "text rich" : "text";
    el.appendChild(t);
    write(el, text);
    append(el);
    return el;
  }
  function textOf(el) { return sources.has(el) ? sources.get(el) : el.querySelector(".text").textContent; }
  function setText(el, text) { change(() => write(el, text)); }
  function setLabel(el, label) { const l = el.querySelector(".label"); if (l) l.textContent = label; }
  /** This tab's own messages (each tab has its own chatId): used to match replies, never for labels. */
  function isOurs(d) { return d.channel === "webchat" && d.chatId === st.chatId; }
  /** Everything said in the web chat is the person's own, from any tab or page load; other apps are named. */
  function fromWebchat(d) { return !d.channel || d.channel === "webchat"; }
  function userLabel(d) { return fromWebchat(d) ? "You" : "You \u00b7 " + d.channel; }
  function assistantLabel(d) { return fromWebchat(d) ? "Assistant" : "Assistant \u2192 " + d.channel; }
  function markCut(el, reason) {
    change(() => {
      el.dataset.stopReason = reason;
      el.dataset.streaming = "false";
      let note = el.querySelector(".cut");
      if (!note) {
        note = document.createElement("div");
        note.className = "cut";
        el.appendChild(note);
      }
      note.textContent = stopNote(reason);
    });
  }


  function takeText(list, text) {
    const i = list.indexOf(text);
    if (i < 0) return false;
    list.splice(i, 1);
    return true;
  }
  function remember(list, text) {
    list.push(text);
    if (list.length > 20) list.shift();
  }

  function toolEl(callId, name, args, summaryText) {
    const el = document.createElement("div");
    el.className = "msg tool";
    el.dataset.role = "tool";
    el.dataset.state = "running";
    if (callId) el.dataset.callId = callId;
    const head = document.createElement("div");
    head.className = "tool-head";
    const n = document.createElement("span");
    n.className = "tool-name";
    n.textContent = name || "tool";
    const a = document.createElement("code");
    a.className = "tool-args";
    a.textContent = args || "";
    head.append(n, a);
    const details = document.createElement("details");
    details.className = "tool-result";
    const summary = document.createElement("summary");
    summary.textContent = summaryText;
    details.append(summary, document.createElement("pre"));
    el.append(head, details);
    append(el);
    if (callId) st.tools.set(callId, el);
    return el;
  }
  function toolResult(callId, name, ok, output) {
    const el = (callId && st.tools.get(callId)) || toolEl(callId, name, "", "");
    el.dataset.state = ok ? "ok" : "failed";
    el.querySelector("summary").textContent = ok ? "result" : "failed";
    el.querySelector("pre").textContent = output || "";
  }

`;
