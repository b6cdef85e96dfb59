import { describe, expect, it } from "vitest";
import { isLoopbackAddress, isLoopbackHost, shouldEmbedToken } from "./should-embed-token.js";

describe("isLoopbackAddress", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["::FFFF:127.0.0.9", true],
    ["0:0:0:0:0:0:0:1", true],
    ["127.0.0.256", false],
    ["127.evil.com", false],
    ["10.0.0.5", false],
    ["192.168.1.20", false],
    ["::ffff:192.168.1.20", false],
    ["fe80::1", false],
    ["", false],
  ])("%s -> %s", (address, expected) => {
    expect(isLoopbackAddress(address)).toBe(expected);
  });
});

describe("isLoopbackHost", () => {
  it.each([
    ["127.0.0.1:18789", true],
    ["localhost:18789", true],
    ["LOCALHOST", true],
    ["chat.localhost:18789", true],
    ["localhost.:18789", true],
    ["[::1]:18789", true],
    ["127.0.0.1", true],
    ["evil.example:18789", false],
    ["localhost.evil.example", false],
    ["192.168.1.20:18789", false],
    ["[fe80::1]:18789", false],
    ["[::1", false],
    [undefined, false],
  ])("%s -> %s", (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe("shouldEmbedToken", () => {
  it.each([
    ["browser on this machine", "127.0.0.1", { host: "127.0.0.1:18789" }, true],
    ["browser on this machine, IPv6", "::1", { host: "[::1]:18789" }, true],
    ["browser on this machine via localhost", "::ffff:127.0.0.1", { host: "localhost:18789" }, true],
    ["another machine", "192.168.1.20", { host: "192.168.1.10:18789" }, false],
    ["another machine, loopback Host header", "192.168.1.20", { host: "127.0.0.1:18789" }, false],
    ["DNS rebinding: loopback socket, foreign name", "127.0.0.1", { host: "attacker.example:18789" }, false],
    [
      "through a local proxy (x-forwarded-for)",
      "127.0.0.1",
      { host: "127.0.0.1", "x-forwarded-for": "1.2.3.4" },
      false,
    ],
    [
      "through a local proxy (forwarded)",
      "127.0.0.1",
      { host: "127.0.0.1", forwarded: "for=1.2.3.4" },
      false,
    ],
    ["through a local proxy (x-real-ip)", "127.0.0.1", { host: "127.0.0.1", "x-real-ip": "1.2.3.4" }, false],
    ["no Host header", "127.0.0.1", {}, false],
  ])("%s -> %s", (_name, remoteAddress, headers, expected) => {
    expect(shouldEmbedToken({ remoteAddress, headers })).toBe(expected);
  });
});
