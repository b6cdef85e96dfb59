import { describe, expect, it } from "vitest";
import type { Transport } from "../plugin-api/types.js";
import { planParts } from "./outbox-parts.js";

function transport(attachments: boolean): Transport {
  return {
    capabilities: { maxTextLength: 10, attachments },
    authorize: () => ({ allowed: true }),
    send: async () => ({}),
  };
}

const pdf = { kind: "document" as const, path: "/w/report.pdf", fileName: "report.pdf" };
const png = { kind: "image" as const, path: "/w/chart.png" };

describe("planParts", () => {
  it("splits the text, then gives each file a part of its own; only text parts quote", () => {
    expect(planParts({ text: "aaaa bbbb cccc", attachments: [pdf, png] }, transport(true))).toEqual([
      { text: "aaaa bbbb", quote: true },
      { text: "cccc", quote: true },
      { text: "", attachment: pdf, quote: false },
      { text: "", attachment: png, quote: false },
    ]);
  });

  it("files without text: no empty text part, and the first file quotes", () => {
    expect(planParts({ text: "  ", attachments: [pdf, png] }, transport(true))).toEqual([
      { text: "", attachment: pdf, quote: true },
      { text: "", attachment: png, quote: false },
    ]);
  });

  it("keeps the text parts' numbers whether or not the files are there (a restart has no files)", () => {
    const withFiles = planParts({ text: "aaaa bbbb cccc", attachments: [pdf] }, transport(true));
    const without = planParts({ text: "aaaa bbbb cccc" }, transport(true));
    expect(withFiles.slice(0, without.length)).toEqual(without);
  });

  it("names the files at the end of the text for a transport that cannot send them", () => {
    const parts = planParts({ text: "see", attachments: [pdf] }, transport(false));
    expect(parts.every((p) => p.attachment === undefined && p.quote)).toBe(true);
    expect(parts.map((p) => p.text).join("")).toBe("see\n\n[file: report.pdf]");
  });
});
