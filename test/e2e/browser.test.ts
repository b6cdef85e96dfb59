import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chooseBrowser, packagedVersion, SYSTEM_CHROMIUM, unpackPackagedChromium } from "./browser.js";

describe("chooseBrowser: which Chromium the browser tests drive", () => {
  const only =
    (...paths: string[]) =>
    (path: string) =>
      paths.includes(path);

  it.each([
    {
      when: "E2E_CHROMIUM is set and exists",
      env: { E2E_CHROMIUM: "/opt/chrome/chrome" },
      present: ["/opt/chrome/chrome", SYSTEM_CHROMIUM],
      choice: { source: "E2E_CHROMIUM", executablePath: "/opt/chrome/chrome" },
    },
    {
      when: "Debian's Chromium is installed",
      env: {},
      present: [SYSTEM_CHROMIUM],
      choice: { source: "system", executablePath: SYSTEM_CHROMIUM },
    },
    {
      when: "an empty E2E_CHROMIUM counts as unset",
      env: { E2E_CHROMIUM: "" },
      present: [SYSTEM_CHROMIUM],
      choice: { source: "system", executablePath: SYSTEM_CHROMIUM },
    },
    {
      when: "there is no Chromium on the machine",
      env: {},
      present: [],
      choice: { source: "packaged" },
    },
  ])("$when", ({ env, present, choice }) => {
    expect(chooseBrowser(env, only(...present))).toEqual(choice);
  });

  it("refuses an E2E_CHROMIUM that does not exist instead of falling back", () => {
    expect(() => chooseBrowser({ E2E_CHROMIUM: "/nowhere/chromium" }, only(SYSTEM_CHROMIUM))).toThrow(
      "E2E_CHROMIUM=/nowhere/chromium does not exist",
    );
  });
});

describe("unpackPackagedChromium", () => {
  let root: string | undefined;
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("reuses a copy unpacked before, and takes a half-unpacked scratch folder for nothing", async () => {
    root = await mkdtemp(join(tmpdir(), "clawdis-browser-test-"));
    const version = await packagedVersion();
    const done = join(root, `clawdis-chromium-${version}`);
    await mkdir(done);
    await writeFile(join(done, "chromium"), "");
    await mkdir(join(root, "clawdis-chromium-unpack-left-by-a-killed-run"));
    await expect(unpackPackagedChromium(root)).resolves.toBe(join(done, "chromium"));
    expect((await readdir(root)).sort()).toEqual([
      `clawdis-chromium-${version}`,
      "clawdis-chromium-unpack-left-by-a-killed-run",
    ]);
  });
});
