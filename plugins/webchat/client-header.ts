/**
 * A fragment of the page's script (client-script.ts inlines it inside its closure): the header (session title,
 * model, context gauge) and the view of an empty conversation (session, model, and the setup hint when there is no model).
 * Uses the script's elements, its state `st`, `api` and CLIENT_RENDER. Written inside String.raw, so it must
 * contain no backtick and no dollar-brace.
 */
export const CLIENT_HEADER = String.raw`
  // ---- header and empty view ----
  function showModel() {
    const m = st.model;
    modelEl.dataset.configured = String(!!(m && m.configured));
    modelEl.textContent = m && m.configured ? "model " + m.name : "no model configured";
  }
  function para(parent, text) {
    const p = document.createElement("p");
    p.textContent = text;
    parent.appendChild(p);
    return p;
  }
  /**
   * Shown while the conversation is empty: the session, the model, and how to set one up when there is none.
   * Notices and this tab's chat commands (data-command) are not conversation: "New session started." after /new
   * sits under it.
   */
  function updateWelcome() {
    const empty = !messagesEl.querySelector(".msg.assistant, .msg.tool, .msg.user:not([data-command])");
    welcomeEl.hidden = !empty || !st.sessionKey;
    if (welcomeEl.hidden) return;
    welcomeEl.textContent = "";
    const m = st.model;
    const configured = !!(m && m.configured);
    para(welcomeEl, "Session " + st.sessionKey + " \u00b7 " + (configured ? "model " + m.name + " at " + m.baseUrl : "no model configured"))
      .className = "welcome-session";
    if (configured) {
      para(welcomeEl, "Nothing said yet in this session. Chat commands: /status, /new, /stop, /think, /verbose.");
      return;
    }
    const hint = document.createElement("div");
    hint.id = "setup-hint";
    const intro = para(hint, "No model is configured, so the agent cannot answer yet. Put your OpenAI-compatible endpoint and model in ");
    const path = document.createElement("code");
    path.id = "setup-path";
    path.textContent = st.configPath || "clawdis.json in the gateway's state directory (~/.clawdis)";
    intro.append(path, " (this example is for Ollama); the running gateway takes it when the file is saved:");
    const example = document.createElement("pre");
    example.id = "setup-example";
    example.textContent = SETUP_EXAMPLE;
    hint.appendChild(example);
    welcomeEl.appendChild(hint);
  }
  function showGauge(row) {
    const used = row && typeof row.contextTokens === "number" ? row.contextTokens : 0;
    const estimated = !!(row && row.contextEstimated);
    const words = contextWords(used, st.contextWindow, estimated);
    gaugeMeter.max = st.contextWindow;
    gaugeMeter.value = used;
    gaugeText.textContent = words;
    gaugeEl.title = "Context: " + words;
    gaugeEl.dataset.used = String(used);
    gaugeEl.dataset.window = String(st.contextWindow);
    gaugeEl.dataset.estimated = String(estimated);
    gaugeEl.hidden = false;
  }
  /**
   * The session's title (the entry's title, docs/sessions.md "Titles") beside its key in the header and in the
   * tab's title: text only. A row of another session id than the one in view (read before a new session) counts
   * as untitled.
   */
  function showTitle(row) {
    const same = row && (!st.sessionId || row.sessionId === st.sessionId);
    const title = same && typeof row.title === "string" ? row.title : "";
    st.title = title;
    sessionEl.textContent = "session " + st.sessionKey + (title ? " \u2014 " + title : "");
    sessionEl.dataset.title = title;
    document.title = title ? title + " \u00b7 clawdis" : "clawdis";
  }
  /**
   * Re-reads the session's row (GET /api/sessions): the context in use for the gauge and the title. Calls during a
   * read make one more read after it. A title is written shortly after the first exchange's reply, so while there
   * is none, st.titleChecks more reads follow, each after TITLE_RECHECK_MS.
   */
  async function refreshHeader() {
    if (!st.sessionKey) return;
    if (st.gauge.busy) {
      st.gauge.again = true;
      return;
    }
    st.gauge.busy = true;
    try {
      do {
        st.gauge.again = false;
        const res = await api("/api/sessions");
        const body = res.ok ? await res.json().catch(() => null) : null;
        const rows = body && Array.isArray(body.sessions) ? body.sessions : null;
        if (!rows) continue;
        const row = rows.find((r) => r && r.key === st.sessionKey);
        if (st.contextWindow) showGauge(row);
        showTitle(row);
      } while (st.gauge.again);
    } catch (e) {
      /* the header keeps its last values; the next event reads them again */
    } finally {
      st.gauge.busy = false;
    }
    if (st.title) st.titleChecks = 0;
    if (st.titleChecks > 0 && !st.titleTimer) {
      st.titleChecks -= 1;
      st.titleTimer = setTimeout(() => {
        st.titleTimer = 0;
        refreshHeader();
      }, TITLE_RECHECK_MS);
    }
  }
`;
