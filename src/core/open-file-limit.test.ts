import { describe, expect, it } from "vitest";
import { openFileLimit } from "./open-file-limit.js";

const limits = (openFiles: string) =>
  [
    "Limit                     Soft Limit           Hard Limit           Units     ",
    "Max cpu time              unlimited            unlimited            seconds   ",
    "Max processes             95532                95532                processes ",
    `Max open files            ${openFiles}                files     `,
    "Max locked memory         8388608              8388608              bytes     ",
  ].join("\n");

describe("openFileLimit", () => {
  it("reads the soft limit on open files, not the hard one or another row", () => {
    expect(openFileLimit(() => limits("20000                524288"))).toBe(20000);
  });

  it("unlimited is Infinity", () => {
    expect(openFileLimit(() => limits("unlimited            unlimited"))).toBe(Number.POSITIVE_INFINITY);
  });

  it("undefined when the file cannot be read or has no such row", () => {
    expect(
      openFileLimit(() => {
        throw Object.assign(new Error("no procfs"), { code: "ENOENT" });
      }),
    ).toBeUndefined();
    expect(openFileLimit(() => "Limit Soft Hard\nMax processes 10 10 processes\n")).toBeUndefined();
  });

  it.runIf(process.platform === "linux")("on Linux, this process's limit is read", () => {
    expect(openFileLimit()).toBeGreaterThan(0);
  });
});
