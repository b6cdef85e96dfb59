/**
 * A fragment of the page's script (see client-script.ts, which inlines it inside its closure): how texts
 * become markup, and the words the page uses. Depends on nothing else in the script. Written inside String.raw,
 * so it must contain no backtick and no dollar-brace.
 *
 * Contracts:
 * - an assistant reply is Markdown, rendered by markdown-it (loaded from the gateway's own route before this
 *   script) with raw HTML off: every "<" in a reply is shown as text. Links are kept only for http:, https: and
 *   mailto: (anything else, javascript: included, stays literal text) and open in a new tab with
 *   rel="noopener noreferrer". Images are not rendered (the page loads nothing from elsewhere);
 * - without markdown-it (it failed to load) a reply is shown as plain text;
 * - every other text (the person's messages, notices, tool output) is plain text, set with textContent.
 */
export const CLIENT_RENDER = String.raw`
  const SAFE_LINK = /^(https?:|mailto:)/i;
  const md = makeMarkdown();
  function makeMarkdown() {
    if (typeof window.markdownit !== "function") return null;
    const m = window.markdownit({ html: false, linkify: true, breaks: true });
    m.disable("image");
    m.validateLink = (url) => SAFE_LINK.test(String(url).trim());
    const base = m.renderer.rules.link_open || ((tokens, i, options, env, self) => self.renderToken(tokens, i, options));
    m.renderer.rules.link_open = (tokens, i, options, env, self) => {
      tokens[i].attrSet("target", "_blank");
      tokens[i].attrSet("rel", "noopener noreferrer");
      return base(tokens, i, options, env, self);
    };
    return m;
  }
  /** Sets a reply's Markdown as markup (raw HTML off, links vetted: see above), else as plain text. */
  function renderRich(target, text) {
    if (md) {
      try {
        target.innerHTML = md.render(text).trim();
        return;
      } catch (e) { /* fall through: plain text loses nothing */ }
    }
    target.textContent = text;
  }

  /** Token counts as /status writes them: 950, 1.5k, 12.3k, 128k, 1.2M. */
  function formatTokens(n) {
    const scaled = (v, unit) => (v < 100 ? String(Number(v.toFixed(1))) : String(Math.round(v))) + unit;
    if (n < 1000) return String(Math.round(n));
    if (n < 1000000) return scaled(n / 1000, "k");
    return scaled(n / 1000000, "M");
  }
  /** The context in words, as /status says it after "Context: ". */
  function contextWords(used, size, estimated) {
    const pct = size > 0 ? ((used / size) * 100).toFixed(1) : "?";
    return formatTokens(used) + "/" + formatTokens(size) + " tokens (" + pct + "%)" + (estimated ? " (estimated)" : "");
  }

  /** The mark under a reply whose turn ended otherwise than with the whole reply (turn-end's stopReason). */
  const STOP_NOTES = {
    aborted: "Stopped: this reply is incomplete.",
    timeout: "Cut short by a watchdog (the turn took too long): this reply is incomplete.",
    "output-limit": "Cut off at the output limit: this reply is incomplete and was not kept.",
    error: "Cut short by an error: this reply is incomplete.",
    "tool-loop": "Ended by the loop guard: this reply is incomplete.",
  };
  function stopNote(reason) {
    return STOP_NOTES[reason] || "Cut short (" + reason + "): this reply is incomplete.";
  }

  /** The setup hint's example: three lines of JSON5 for clawdis.json. */
  const SETUP_EXAMPLE = "{\n  inbound: { reply: { agent: { baseUrl: \"http://127.0.0.1:11434/v1\", model: \"qwen2.5:14b\" } } },\n}";
`;
