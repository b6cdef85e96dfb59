import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pathVerdict } from "../agent/tools/tool-path.js";
import { stateSecrets } from "./state-secrets.js";

describe("stateSecrets", () => {
  it("holds the bash allowlist: no file tool writes its own way past an approval", () => {
    const secrets = stateSecrets({ CLAWDIS_STATE_DIR: "/s", HOME: "/h" });
    const path = join("/s", "approvals.json");
    expect(pathVerdict(path, "../approvals.json", { secrets })).toMatch(/is the bash allowlist/);
    expect(pathVerdict(join("/s", "workspace", "notes.txt"), "notes.txt", { secrets })).toBeUndefined();
  });
});
