import { describe, expect, it } from "vitest";
import { MarkdownStream, type MarkdownStyle, renderInline, renderMarkdown } from "./markdown-terminal.js";
import { createStyle } from "./terminal-style.js";

/** Styles as visible tags, so that a table reads as what the terminal shows. */
const tags: MarkdownStyle = {
  bold: (t) => `<b>${t}</b>`,
  dim: (t) => `<dim>${t}</dim>`,
  italic: (t) => `<i>${t}</i>`,
  underline: (t) => `<u>${t}</u>`,
  code: (t) => `<code>${t}</code>`,
  strike: (t) => `<s>${t}</s>`,
};

describe("renderInline", () => {
  it.each([
    ["plain text", "plain text"],
    ["Here is **bold text** and `inline_code`.", "Here is <b>bold text</b> and <code>inline_code</code>."],
    ["a __strong__ word", "a <b>strong</b> word"],
    ["an *italic* and an _italic_", "an <i>italic</i> and an <i>italic</i>"],
    ["snake_case_name and file_name.py stay", "snake_case_name and file_name.py stay"],
    ["2 * 3 * 4 is not emphasis", "2 * 3 * 4 is not emphasis"],
    ["`**not bold**` in code", "<code>**not bold**</code> in code"],
    ["``a ` tick``", "<code>a ` tick</code>"],
    ["\\*not italic\\*", "*not italic*"],
    ["~~gone~~ now", "<s>gone</s> now"],
    ["see [the docs](https://x.dev/a_b)", "see <u>the docs</u> <dim>(https://x.dev/a_b)</dim>"],
    ["**bold with `code` inside**", "<b>bold with <code>code</code> inside</b>"],
    ["an unclosed **star", "an unclosed **star"],
  ])("%j", (text, expected) => {
    expect(renderInline(text, tags)).toBe(expected);
  });
});

describe("renderMarkdown", () => {
  it("renders headings, lists, quotes, rules and fenced code (nothing parsed inside the fence)", () => {
    const text = [
      "# Title",
      "### Small *heading*",
      "- one **b**",
      "  * nested",
      "- [x] done",
      "3. third",
      "> quoted `x`",
      "---",
      "```js",
      "const a_b = **1**; // # not a heading",
      "```",
      "after",
    ].join("\n");
    expect(renderMarkdown(text, tags).split("\n")).toEqual([
      "<b><u>Title</u></b>",
      "<b>Small <i>heading</i></b>",
      "• one <b>b</b>",
      "  • nested",
      "• ☑ done",
      "3. third",
      "<dim>│</dim> quoted <code>x</code>",
      `<dim>${"─".repeat(24)}</dim>`,
      "<dim>```js</dim>",
      "<code>const a_b = **1**; // # not a heading</code>",
      "<dim>```</dim>",
      "after",
    ]);
  });

  it("a fence closes only with the same fence character, at least as long", () => {
    const text = ["~~~~", "```", "~~~", "~~~~", "**b**"].join("\n");
    expect(renderMarkdown(text, tags).split("\n")).toEqual([
      "<dim>~~~~</dim>",
      "<code>```</code>",
      "<code>~~~</code>",
      "<dim>~~~~</dim>",
      "<b>b</b>",
    ]);
  });

  it("with the plain style (piped, NO_COLOR) adds no escape sequences", () => {
    expect(renderMarkdown("# T\n**b** `c`", createStyle(false))).toBe("T\nb c");
  });
});

describe("MarkdownStream", () => {
  it("writes each line once, when complete, however the deltas split it; flush writes the rest", () => {
    const writes: string[] = [];
    const md = new MarkdownStream((t) => writes.push(t), tags);
    for (const delta of ["He", "re is **bo", "ld**\n``", "`py\nx = 1\n", "``", "`\nDone *it", "al*"])
      md.push(delta);
    expect(writes).toEqual([
      "Here is <b>bold</b>\n",
      "<dim>```py</dim>\n",
      "<code>x = 1</code>\n",
      "<dim>```</dim>\n",
    ]);
    md.flush();
    expect(writes.at(-1)).toBe("Done <i>ital</i>");
    md.flush();
    expect(writes).toHaveLength(5);
  });

  it("starts the next segment outside a code block left open", () => {
    const writes: string[] = [];
    const md = new MarkdownStream((t) => writes.push(t), tags);
    md.push("```\ncode\n");
    md.flush();
    md.push("**b**\n");
    expect(writes.at(-1)).toBe("<b>b</b>\n");
  });
});
