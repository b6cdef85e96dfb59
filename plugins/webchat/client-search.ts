/**
 * A fragment of the page's script (client-script.ts inlines it inside its closure): the search box. Uses the
 * script's `st`, `api`, `errorText`, `askToken` and `messagesEl`. Written inside String.raw, so it must contain no
 * backtick and no dollar-brace.
 *
 * Contracts:
 * - a search asks `GET /api/search?q=…&limit=50` (docs/http-api.md) and lists the hits newest first under the
 *   header: time, session key, role and the snippet, the match in a `<mark>`; every text is set through
 *   textContent (nothing from a transcript becomes markup);
 * - a hit is a link to the page on its session: `/?session=<key>#hit-<entryId>` (the primary session without
 *   `session=`); opened, the page shows that session and, once its history is in, scrolls to the message and marks
 *   it (`data-hit="true"`). A hit in an earlier session of the key, or older than the history the page loads, is
 *   not in the view: a notice says so;
 * - Escape or an empty search closes the list.
 */
export const CLIENT_SEARCH = String.raw`
  // ---- search ----
  const searchForm = byId("search-form");
  const searchInput = byId("search-input");
  const searchResults = byId("search-results");
  function closeSearch() {
    searchResults.hidden = true;
    searchResults.textContent = "";
  }
  function hitHref(hit) {
    const session = hit.sessionKey && hit.sessionKey !== st.mainKey ? "?session=" + encodeURIComponent(hit.sessionKey) : "";
    return "/" + session + "#hit-" + encodeURIComponent(hit.entryId);
  }
  function hitEl(hit) {
    const a = document.createElement("a");
    a.className = "hit";
    a.href = hitHref(hit);
    a.dataset.sessionKey = hit.sessionKey || "";
    a.dataset.entryId = hit.entryId;
    const meta = document.createElement("div");
    meta.className = "muted";
    meta.textContent = new Date(hit.ts).toLocaleString() + " \u00b7 " + (hit.sessionKey || "?") + " \u00b7 " + hit.role +
      (hit.current ? "" : " \u00b7 earlier session");
    const text = document.createElement("div");
    const s = hit.snippet;
    const mark = document.createElement("mark");
    mark.textContent = s.text.slice(s.start, s.end);
    text.append(s.text.slice(0, s.start), mark, s.text.slice(s.end));
    a.append(meta, text);
    // The same page on the same session: no reload, only the scroll to the message.
    a.addEventListener("click", (e) => {
      if ((hit.sessionKey || st.mainKey) !== st.sessionKey) return;
      e.preventDefault();
      history.replaceState(null, "", a.href);
      closeSearch();
      showHit();
    });
    return a;
  }
  async function search(q) {
    searchResults.hidden = false;
    searchResults.textContent = "Searching\u2026";
    let res;
    try {
      res = await api("/api/search?limit=50&q=" + encodeURIComponent(q));
    } catch (e) {
      searchResults.textContent = "The gateway is not reachable.";
      return;
    }
    if (res.status === 401) return askToken("The gateway refused this token.");
    const body = await res.json().catch(() => null);
    if (!res.ok || !body) {
      searchResults.textContent = "Search failed: " + errorText(body, res.status);
      return;
    }
    searchResults.textContent = "";
    const title = document.createElement("div");
    title.className = "muted";
    title.textContent = body.hits.length === 0
      ? "No hits for " + q + "."
      : body.hits.length + (body.limited ? "+" : "") + " hit" + (body.hits.length === 1 ? "" : "s") + ", newest first";
    searchResults.append(title);
    for (const hit of body.hits) searchResults.append(hitEl(hit));
  }
  /** After the history loads: the message the address names (#hit-<entryId>) scrolled to and marked. */
  function showHit() {
    const match = /^#hit-(.+)$/.exec(location.hash);
    if (!match) return;
    const id = decodeURIComponent(match[1]);
    for (const old of messagesEl.querySelectorAll('[data-hit="true"]')) delete old.dataset.hit;
    const el = Array.from(messagesEl.querySelectorAll("[data-entry-id]")).find((m) => m.dataset.entryId === id);
    if (el) {
      el.dataset.hit = "true";
      el.scrollIntoView({ block: "center" });
    } else {
      bubble("notice", "The message found is not in this view: it is in an earlier session of " + st.sessionKey +
        ", or older than the conversation shown here.", "");
    }
  }
  searchForm.addEventListener("submit", (e) => {
    e.preventDefault();
    const q = searchInput.value.trim();
    if (q) search(q);
    else closeSearch();
  });
  searchInput.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      searchInput.value = "";
      closeSearch();
    }
  });
`;
