/** The endpoint `clawdis init` offers: a local Ollama. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:11434/v1";

export type BaseUrlCheck = { ok: true; url: string; note?: string } | { ok: false; error: string };

/** `host`, `host:port`, `host/path`, `[v6]:port`: what a person types for a URL without its scheme. */
const HOST_ONLY = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:\/\S*)?$/;

/**
 * A base URL as `clawdis init` writes it, from what was typed or given with `--base-url`. Pure.
 * - An http:// or https:// URL with a host is kept as it is (trailing slashes dropped).
 * - Without a scheme (`localhost:11434`, `10.0.0.5:8080/v1`) it is read as http://, and with no path `/v1` is
 *   added (where OpenAI-compatible servers answer: Ollama, llama.cpp, vLLM, LM Studio); `note` says so.
 * - Anything else (another scheme, spaces, no host) is refused with what was expected and what was given.
 */
export function normalizeBaseUrl(input: string): BaseUrlCheck {
  const given = input.trim();
  const refuse = (): BaseUrlCheck => ({
    ok: false,
    error: `expected an http:// or https:// URL like "${DEFAULT_BASE_URL}", got ${JSON.stringify(input)}`,
  });
  if (given.length === 0) return refuse();
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(given)) {
    const url = parse(given);
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "")
      return refuse();
    if (/\s/.test(given)) return refuse();
    return { ok: true, url: trimSlashes(given) };
  }
  if (!HOST_ONLY.test(given)) return refuse();
  const withScheme = `http://${given}`;
  const url = parse(withScheme);
  if (!url || url.hostname === "" || (url.port !== "" && Number(url.port) > 65535)) return refuse();
  const full = url.pathname === "/" ? `${trimSlashes(withScheme)}/v1` : trimSlashes(withScheme);
  return { ok: true, url: full, note: `${JSON.stringify(given)} has no scheme: using ${full}` };
}

function parse(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

function trimSlashes(url: string): string {
  return url.replace(/\/+$/, "");
}
