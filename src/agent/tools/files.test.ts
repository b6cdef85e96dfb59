import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../plugin-api/types.js";
import { editFileTool } from "./edit-file.js";
import { readFileTool, windowOf } from "./read-file.js";
import { writeFileTool } from "./write-file.js";

let dir: string;
const context = (): ToolContext => ({
  signal: new AbortController().signal,
  cwd: dir,
  sessionKey: "main",
  timeoutMs: 10_000,
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawdis-files-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("write_file", () => {
  it("creates parent directories and reports bytes written", async () => {
    const result = await writeFileTool().execute({ path: "notes/a/b.txt", content: "héllo\n" }, context());
    expect(result).toEqual({ ok: true, output: "created notes/a/b.txt: wrote 7 bytes" });
    expect(await readFile(join(dir, "notes/a/b.txt"), "utf8")).toBe("héllo\n");
    const again = await writeFileTool().execute({ path: join(dir, "notes/a/b.txt"), content: "" }, context());
    expect(again.ok).toBe(true);
    expect(again.output).toMatch(/^replaced .*b\.txt: wrote 0 bytes$/);
  });

  it("fails clearly on a directory and on missing arguments", async () => {
    await mkdir(join(dir, "sub"));
    expect(await writeFileTool().execute({ path: "sub", content: "x" }, context())).toEqual({
      ok: false,
      output: "sub is a directory (list it with the bash tool)",
    });
    expect(await writeFileTool().execute({ path: "x.txt" }, context())).toEqual({
      ok: false,
      output: 'write_file: missing argument "content" (a string)',
    });
  });
});

describe("read_file", () => {
  it("reads back what was written, verbatim", async () => {
    await writeFile(join(dir, "a.txt"), "one\ntwo\nthree\n");
    expect(await readFileTool().execute({ path: "a.txt" }, context())).toEqual({
      ok: true,
      output: "one\ntwo\nthree",
    });
  });

  it("pages with offset and limit, saying how to continue", async () => {
    await writeFile(join(dir, "n.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const page = await readFileTool().execute({ path: "n.txt", offset: 3, limit: "2" }, context());
    expect(page).toEqual({
      ok: true,
      output: "line 3\nline 4\n[… 6 more lines in n.txt (10 in all); read_file with offset=5 continues]",
    });
    const past = await readFileTool().execute({ path: "n.txt", offset: 11 }, context());
    expect(past.output).toBe("(offset 11 is past the end of n.txt, which has 10 lines)");
  });

  it("cuts long files at a line boundary under the byte cap", () => {
    const text = Array.from({ length: 100 }, () => "x".repeat(99)).join("\n");
    const out = windowOf(text, "big.txt", 1, 2000, 1000);
    expect(out.split("\n").slice(0, -1)).toEqual(Array.from({ length: 10 }, () => "x".repeat(99)));
    expect(out).toContain("read_file with offset=11 continues");
  });

  it("fails clearly on a missing file, a directory, a binary file and bad arguments", async () => {
    await mkdir(join(dir, "d"));
    await writeFile(join(dir, "bin"), Buffer.from([1, 2, 0, 3]));
    const read = (args: Record<string, unknown>) => readFileTool().execute(args, context());
    expect(await read({ path: "missing.txt" })).toEqual({ ok: false, output: "missing.txt does not exist" });
    expect(await read({ path: "d" })).toEqual({
      ok: false,
      output: "d is a directory (list it with the bash tool)",
    });
    expect(await read({ path: "bin" })).toEqual({
      ok: false,
      output: "bin looks like a binary file (4 bytes); it is not shown",
    });
    expect(await read({ path: "d", offset: 0 })).toEqual({
      ok: false,
      output: 'read_file: argument "offset" must be an integer ≥ 1',
    });
  });
});

describe("edit_file", () => {
  const edit = (args: Record<string, unknown>) => editFileTool().execute(args, context());

  it("replaces exactly one occurrence, literally", async () => {
    await writeFile(join(dir, "c.ts"), "const a = 1;\nconst b = 2;\n");
    const result = await edit({ path: "c.ts", old_text: "const b = 2;", new_text: "const b = '$&';" });
    expect(result).toEqual({ ok: true, output: "edited c.ts: replaced 1 occurrence" });
    expect(await readFile(join(dir, "c.ts"), "utf8")).toBe("const a = 1;\nconst b = '$&';\n");
  });

  it("refuses an ambiguous edit unless replace_all, and a missing one", async () => {
    await writeFile(join(dir, "d.txt"), "x y x y x");
    expect(await edit({ path: "d.txt", old_text: "x", new_text: "z" })).toEqual({
      ok: false,
      output:
        "old_text occurs 3 times in d.txt; include more surrounding lines to make it unique, or set replace_all to true",
    });
    expect(await readFile(join(dir, "d.txt"), "utf8")).toBe("x y x y x");
    expect(await edit({ path: "d.txt", old_text: "x", new_text: "z", replace_all: true })).toEqual({
      ok: true,
      output: "edited d.txt: replaced 3 occurrences",
    });
    expect(await readFile(join(dir, "d.txt"), "utf8")).toBe("z y z y z");
    const missing = await edit({ path: "d.txt", old_text: "  z", new_text: "q" });
    expect(missing.ok).toBe(false);
    expect(missing.output).toMatch(/^old_text was not found in d\.txt; read the file again/);
  });

  it("fails clearly on a missing file and on no-op or empty edits", async () => {
    expect(await edit({ path: "nope.txt", old_text: "a", new_text: "b" })).toEqual({
      ok: false,
      output: "nope.txt does not exist",
    });
    expect((await edit({ path: "nope.txt", old_text: "a", new_text: "a" })).output).toContain("the same");
    expect((await edit({ path: "nope.txt", old_text: "", new_text: "a" })).output).toBe(
      'edit_file: argument "old_text" must not be empty',
    );
  });
});
