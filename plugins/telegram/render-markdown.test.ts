import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./render-markdown.js";

describe("renderMarkdown", () => {
  it.each([
    ["plain text", "hello", "hello", "hello"],
    ["escapes", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d", "a < b && c > d"],
    ["bold", "**bold** and __also__", "<b>bold</b> and <b>also</b>", "bold and also"],
    ["italic", "*it* and _it_", "<i>it</i> and <i>it</i>", "it and it"],
    ["strike", "~~gone~~", "<s>gone</s>", "gone"],
    [
      "inline code keeps its markers inside",
      "`a **b** <c>`",
      "<code>a **b** &lt;c&gt;</code>",
      "a **b** <c>",
    ],
    ["nested", "**bold _it_**", "<b>bold <i>it</i></b>", "bold it"],
    [
      "link",
      "[docs](https://x.org/a?b=1&c=2)",
      '<a href="https://x.org/a?b=1&amp;c=2">docs</a>',
      "docs (https://x.org/a?b=1&c=2)",
    ],
    ["heading", "## Title", "<b>Title</b>", "Title"],
    ["snake_case is not italic", "my_var_name", "my_var_name", "my_var_name"],
    ["unbalanced markers stay", "2 * 3 and **open", "2 * 3 and **open", "2 * 3 and **open"],
  ])("%s", (_name, input, html, plain) => {
    expect(renderMarkdown(input)).toEqual({ html, plain });
  });

  it("renders a fenced code block with its language, contents escaped and untouched", () => {
    const out = renderMarkdown("before\n```ts\nconst a = 1 < 2 && **x**;\n```\nafter");
    expect(out.html).toBe(
      'before\n<pre><code class="language-ts">const a = 1 &lt; 2 &amp;&amp; **x**;</code></pre>\nafter',
    );
    expect(out.plain).toBe("before\nconst a = 1 < 2 && **x**;\nafter");
  });

  it("an unclosed fence runs to the end", () => {
    expect(renderMarkdown("```\ncode").html).toBe("<pre><code>code</code></pre>");
  });

  it("never lengthens the visible text", () => {
    const samples = [
      "**a** _b_ `c` [d](https://e.f) ~~g~~ # h",
      "```py\nx\n```",
      "a < b > c & d",
      "## **x**",
    ];
    for (const sample of samples) {
      const visible = renderMarkdown(sample)
        .html.replace(/<[^>]+>/g, "")
        .replace(/&(lt|gt|amp|quot);/g, "x");
      expect(visible.length).toBeLessThanOrEqual(sample.length);
      expect(renderMarkdown(sample).plain.length).toBeLessThanOrEqual(sample.length);
    }
  });
});
