import { describe, expect, it } from "vitest";
import { configPathFor } from "./page-info.js";

describe("configPathFor: the file the setup hint names", () => {
  it.each([
    { env: {}, path: "/state/clawdis.json" },
    { env: { CLAWDIS_CONFIG_PATH: "" }, path: "/state/clawdis.json" },
    { env: { CLAWDIS_CONFIG_PATH: "/etc/clawdis.json5" }, path: "/etc/clawdis.json5" },
    {
      env: { CLAWDIS_CONFIG_PATH: "~/conf/clawdis.json", HOME: "/home/ada" },
      path: "/home/ada/conf/clawdis.json",
    },
  ])("$env gives $path", ({ env, path }) => {
    expect(configPathFor(env, "/state")).toBe(path);
  });
});
