import { describe, expect, it } from "vitest";
import { normalizeBaseUrl } from "./init-base-url.js";

describe("normalizeBaseUrl", () => {
  it.each([
    ["http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"],
    ["https://api.openai.com/v1/", "https://api.openai.com/v1"],
    ["  http://localhost:8080  ", "http://localhost:8080"],
    ["HTTP://host.lan/v1", "HTTP://host.lan/v1"],
  ])("keeps %j as %j, without a note", (input, url) => {
    expect(normalizeBaseUrl(input)).toEqual({ ok: true, url });
  });

  it.each([
    ["localhost:11434", "http://localhost:11434/v1"],
    ["localhost:11434/", "http://localhost:11434/v1"],
    ["127.0.0.1:8080/api/v1", "http://127.0.0.1:8080/api/v1"],
    ["gpu-box.lan", "http://gpu-box.lan/v1"],
    ["[::1]:11434", "http://[::1]:11434/v1"],
  ])("reads %j without a scheme as %j, and says so", (input, url) => {
    expect(normalizeBaseUrl(input)).toEqual({
      ok: true,
      url,
      note: `${JSON.stringify(input)} has no scheme: using ${url}`,
    });
  });

  it.each([
    [""],
    ["   "],
    ["ftp://host/v1"],
    ["file:///etc/passwd"],
    ["not a url"],
    ["http://"],
    ["localhost:99999"],
    ["http://host:99999/v1"],
    ["-host:1"],
    ["http://exa mple.com"],
  ])("refuses %j, naming what was given", (input) => {
    const checked = normalizeBaseUrl(input);
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.error).toBe(
        `expected an http:// or https:// URL like "http://127.0.0.1:11434/v1", got ${JSON.stringify(input)}`,
      );
    }
  });
});
