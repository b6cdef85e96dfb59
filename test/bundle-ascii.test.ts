import { describe, expect, it } from "vitest";
import { toAscii } from "../scripts/bundle-ascii.js";

describe("toAscii", () => {
  it("escapes every character past U+007F, the same string or pattern once evaluated", () => {
    const source = 'const a = /[…’]$/; // a — comment\nconst b = "x·y"; const c = "😀";\n';
    const ascii = toAscii(source);
    expect(/[\u0080-\uffff]/.test(ascii)).toBe(false);
    expect(ascii).toContain("\\u2026\\u2019");
    // A surrogate pair as two escapes, which a string and a pattern read as the one character.
    expect(ascii).toContain('"\\ud83d\\ude00"');
    const evaluate = (code: string) => new Function(`${code}; return [a.test("ok…"), b, c];`)();
    expect(evaluate(ascii)).toEqual(evaluate(source));
  });

  it("leaves ASCII text as it is", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text is JavaScript source, templates and all
    const text = "const x = `a ${1} b`;\n";
    expect(toAscii(text)).toBe(text);
  });

  it("refuses a non-ASCII character in a String.raw template, whose raw text an escape would change", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text is JavaScript source, templates and all
    const bundle = 'const ok = "é";\nconst page = String.raw`\n  say("${x} done …");\n`;\n';
    expect(() => toAscii(bundle)).toThrow(
      /bundle line 3: "…" in a String\.raw template; write it as \\u2026/,
    );
    // After the template, escaping goes on.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the text is JavaScript source, templates and all
    expect(toAscii('const page = String.raw`a ${b} \\` c`; const d = "é";')).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the text is JavaScript source, templates and all
      'const page = String.raw`a ${b} \\` c`; const d = "\\u00e9";',
    );
  });
});
