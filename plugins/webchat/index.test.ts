import { request } from "node:http";
import { tmpdir } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/core/config-schema.js";
import { createMemoryLogger } from "../../src/core/logger.js";
import { HttpServer } from "../../src/http/http-server.js";
import { PLUGIN_API_VERSION, type PluginContext } from "../../src/plugin-api/index.js";
import { CLIENT_SCRIPT } from "./client-script.js";
import webchat from "./index.js";
import { renderPage } from "./page.js";

const TOKEN = "test-gateway-token-0123456789";

function contextFor(server: HttpServer): PluginContext {
  // Asserted, not annotated: PluginContext grows with the plugin API (pluginStateDir, stagingDir,
  // primarySessionKey in version 2); they are filled in here so the test compiles against either shape.
  const context = {
    id: "webchat",
    config: undefined,
    gatewayConfig: defaultConfig(),
    stateDir: tmpdir(),
    pluginStateDir: tmpdir(),
    stagingDir: tmpdir(),
    primarySessionKey: "main",
    logger: createMemoryLogger().logger,
    receive: () => Promise.reject(new Error("the web chat page never calls receive")),
    onEvent: () => () => {},
    http: server,
    gatewayToken: TOKEN,
    fail: (error: unknown) => {
      throw error;
    },
  };
  return context as PluginContext;
}

/** GET with an explicit Host header (fetch does not let a caller set it). */
function get(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>(
    (resolve, reject) => {
      const req = request({ host: "127.0.0.1", port, path, headers }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on("error", reject);
      req.end();
    },
  );
}

function embeddedToken(html: string): string | undefined {
  return /<meta name="clawdis-token" content="([^"]*)">/.exec(html)?.[1];
}

describe("webchat plugin", () => {
  let server: HttpServer;
  let port: number;

  beforeEach(async () => {
    server = new HttpServer({ token: TOKEN, logger: createMemoryLogger().logger });
    const instance = await webchat.create(contextFor(server));
    expect(instance.transport).toBeUndefined();
    port = (await server.listen(0, "127.0.0.1")).port;
  });

  afterEach(async () => {
    await server.close();
  });

  it("declares itself against the current plugin API", () => {
    expect(webchat.apiVersion).toBe(PLUGIN_API_VERSION);
    expect(webchat.id).toBe("webchat");
  });

  it("serves the page without a token and embeds the token for a browser on 127.0.0.1", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(embeddedToken(html)).toBe(TOKEN);
    for (const id of ["messages", "input", "send", "busy", "token-form", "token-input"]) {
      expect(html).toContain(`id="${id}"`);
    }
  });

  it("also embeds it under the name localhost", async () => {
    const res = await get(port, "/", { host: `localhost:${port}` });
    expect(res.status).toBe(200);
    expect(embeddedToken(res.body)).toBe(TOKEN);
  });

  it("does not embed the token for a page asked for under a foreign name (DNS rebinding)", async () => {
    const res = await get(port, "/", { host: `attacker.example:${port}` });
    expect(res.status).toBe(200);
    expect(embeddedToken(res.body)).toBeUndefined();
    expect(res.body).not.toContain(TOKEN);
    expect(res.body).toContain('id="token-form"');
  });

  it("does not embed the token for a request that came through a proxy", async () => {
    const res = await get(port, "/", { host: `127.0.0.1:${port}`, "x-forwarded-for": "203.0.113.9" });
    expect(embeddedToken(res.body)).toBeUndefined();
    expect(res.body).not.toContain(TOKEN);
  });

  it("serves markdown-it's browser build without a token, under the versioned path the page names", async () => {
    const html = await (await fetch(`http://127.0.0.1:${port}/`)).text();
    const src = /<script nonce="[^"]+" src="([^"]+)">/.exec(html)?.[1];
    expect(src).toMatch(/^\/webchat\/markdown-it-\d+\.\d+\.\d+\.js$/);
    const res = await fetch(`http://127.0.0.1:${port}${src}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const script = await res.text();
    expect(script).toContain("markdownit");
    expect(script).not.toContain("sourceMappingURL");
  });

  it("tells the page the context window and the config path, with the token only", async () => {
    expect((await fetch(`http://127.0.0.1:${port}/webchat/info`)).status).toBe(401);
    const res = await fetch(`http://127.0.0.1:${port}/webchat/info`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    const info = (await res.json()) as { contextWindow: number; configPath: string };
    expect(info.contextWindow).toBe(defaultConfig().inbound.reply.agent.contextTokens);
    expect(info.configPath).toMatch(/clawdis\.json$/);
  });

  it("uses a fresh CSP nonce per response, matching the inline style and script", async () => {
    const one = await fetch(`http://127.0.0.1:${port}/`);
    const two = await fetch(`http://127.0.0.1:${port}/`);
    const nonceOf = (csp: string | null) => /script-src 'nonce-([^']+)'/.exec(csp ?? "")?.[1];
    const nonce = nonceOf(one.headers.get("content-security-policy"));
    expect(nonce).toBeTruthy();
    expect(nonce).not.toBe(nonceOf(two.headers.get("content-security-policy")));
    const html = await one.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain(`<script nonce="${nonce}" src="/webchat/markdown-it-`);
    expect(html).toContain(`<style nonce="${nonce}">`);
  });
});

describe("the page", () => {
  const MD = "/webchat/markdown-it-1.0.0.js";

  it("loads nothing from elsewhere: every src and href is same-origin or data:, no stylesheet link", () => {
    const html = renderPage({ nonce: "n", token: "t", markdownScript: MD });
    const urls = [...html.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]);
    expect(urls).toEqual(["data:,", MD]);
    expect(html).not.toMatch(/<link[^>]+stylesheet/);
    // Every script carries the nonce: the CSP (script-src 'nonce-…' only) lets nothing else run.
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts).toEqual([`<script nonce="n" src="${MD}">`, '<script nonce="n">']);
  });

  it("escapes the token into its attribute", () => {
    const html = renderPage({ nonce: "n", token: '"><script>alert(1)</script>', markdownScript: MD });
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain('content="&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;"');
  });

  it("has no token meta at all when none is given", () => {
    expect(renderPage({ nonce: "n", markdownScript: MD })).not.toContain('<meta name="clawdis-token"');
  });

  it("inlines a script that parses and uses the documented API", () => {
    expect(() => new Function(CLIENT_SCRIPT)).not.toThrow();
    expect(CLIENT_SCRIPT).not.toContain("</script");
    for (const needle of [
      "/api/status",
      "/api/history?session=",
      "/api/events?session=",
      '"&filter=" + encodeURIComponent(filter)',
      "/api/agent",
      "mainKey",
    ]) {
      expect(CLIENT_SCRIPT).toContain(needle);
    }
    // The session key comes from /api/status, never a literal.
    expect(CLIENT_SCRIPT).not.toMatch(/["']main["']/);
  });
});
