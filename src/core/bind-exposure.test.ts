import { describe, expect, it } from "vitest";
import { bindExposure } from "./bind-exposure.js";

describe("bindExposure", () => {
  it.each([
    "127.0.0.1",
    "127.1.2.3",
    "127.255.255.255",
    "::1",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
    "localhost",
    "LocalHost",
    "localhost.",
  ])("%s is loopback: no warning", (bind) => {
    expect(bindExposure(bind)).toEqual({});
  });

  it.each([
    ["0.0.0.0", "gateway.bind is 0.0.0.0 (every network interface): "],
    ["::", "gateway.bind is :: (every network interface): "],
    ["0:0:0:0:0:0:0:0", "gateway.bind is 0:0:0:0:0:0:0:0 (every network interface): "],
    ["192.168.1.20", "gateway.bind is 192.168.1.20, not a loopback address: "],
    ["10.0.0.1", "gateway.bind is 10.0.0.1, not a loopback address: "],
    ["128.0.0.1", "gateway.bind is 128.0.0.1, not a loopback address: "],
    ["fe80::1", "gateway.bind is fe80::1, not a loopback address: "],
    ["::2", "gateway.bind is ::2, not a loopback address: "],
    ["nas.local", 'gateway.bind is "nas.local", a host name other than localhost: '],
    ["localhost.example.com", 'gateway.bind is "localhost.example.com", a host name other than localhost: '],
    ["my-localhost", 'gateway.bind is "my-localhost", a host name other than localhost: '],
  ])("%s is exposed: warns", (bind, head) => {
    const { warning } = bindExposure(bind);
    expect(warning?.startsWith(head), warning).toBe(true);
    expect(warning).toContain(
      "the API, the web chat and webhooks are reachable from the network, protected only by bearer tokens over plain HTTP",
    );
    expect(warning).toContain("set it to 127.0.0.1");
  });
});
