/**
 * A JSON5-aware locator: finds the line and column of every object key and array element in a JSON5 text,
 * so that a config error can say "(clawdis.json line 7)".
 *
 * Contract:
 * - Only structure is tracked (objects, arrays, keys, element indexes); scalar values are skipped as tokens.
 * - Strings (single or double quoted, with escapes and line continuations), comments (`//`, `/* *\/`), unquoted
 *   keys (with `\uXXXX` escapes), trailing commas and a leading BOM are understood.
 * - Never throws: on text that is not valid JSON5 it returns what it found before the damage.
 * - A duplicated key is located at its LAST occurrence, the one JSON5.parse keeps; `duplicates()` lists every key
 *   written more than once in the same object, with all its locations.
 * - Lines are 1-based and end at `\n`, `\r\n` or a lone `\r`; columns are 1-based UTF-16 offsets in the line.
 */

export type Json5Path = readonly (string | number)[];

export interface Json5Location {
  line: number;
  column: number;
}

export interface Json5Locator {
  /** Where the key (or array element) at `path` starts; `[]` is the top-level value. */
  at(path: Json5Path): Json5Location | undefined;
  /** The location of `path`, else of its deepest ancestor that exists in the text. */
  nearest(path: Json5Path): { path: Json5Path; location: Json5Location } | undefined;
  /** Every located path (object keys and array elements). */
  paths(): Json5Path[];
  /** Keys written more than once in the same object, in the order their second occurrence appears. */
  duplicates(): Json5Duplicate[];
}

/** A key written more than once in one object: JSON5.parse silently keeps the last value. */
export interface Json5Duplicate {
  path: Json5Path;
  /** Every occurrence, in file order (at least two). */
  locations: Json5Location[];
}

type TokenKind = "punct" | "string" | "word";

interface Token {
  kind: TokenKind;
  /** Punctuator char, decoded string value, or the raw word (identifier/number/literal). */
  value: string;
  line: number;
  column: number;
}

interface LexResult {
  tokens: Token[];
  /** True when the text ended inside a string or a block comment. */
  unterminated: boolean;
}

const PUNCTUATORS = new Set(["{", "}", "[", "]", ":", ","]);

function isLineBreak(ch: string): boolean {
  return ch === "\n" || ch === "\r";
}

/** Splits JSON5 text into tokens, dropping whitespace and comments. */
function lex(input: string): LexResult {
  const text = input.startsWith("\uFEFF") ? input.slice(1) : input;
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;

  // Advances over one char at `i`, counting line breaks (\r\n counts once).
  const step = (): void => {
    const ch = text[i];
    i++;
    if (ch === "\n" || (ch === "\r" && text[i] !== "\n")) {
      line++;
      lineStart = i;
    }
  };

  while (i < text.length) {
    const ch = text[i] as string;
    if (/\s/.test(ch)) {
      step();
      continue;
    }
    if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && !isLineBreak(text[i] as string)) step();
      continue;
    }
    if (ch === "/" && text[i + 1] === "*") {
      step();
      step();
      while (i < text.length && !(text[i] === "*" && text[i + 1] === "/")) step();
      if (i >= text.length) return { tokens, unterminated: true };
      step();
      step();
      continue;
    }
    const tokenLine = line;
    const tokenColumn = i - lineStart + 1;
    if (PUNCTUATORS.has(ch)) {
      tokens.push({ kind: "punct", value: ch, line: tokenLine, column: tokenColumn });
      step();
      continue;
    }
    if (ch === '"' || ch === "'") {
      step();
      let raw = "";
      let closed = false;
      while (i < text.length) {
        const c = text[i] as string;
        if (c === ch) {
          closed = true;
          step();
          break;
        }
        if (c === "\\") {
          raw += c;
          step();
          if (i < text.length) {
            const escaped = text[i] as string;
            raw += escaped;
            step();
            // A line continuation "\\\r\n" swallows both chars of the break.
            if (escaped === "\r" && text[i] === "\n") {
              raw += "\n";
              step();
            }
          }
          continue;
        }
        raw += c;
        step();
      }
      if (!closed) return { tokens, unterminated: true };
      tokens.push({ kind: "string", value: decodeEscapes(raw), line: tokenLine, column: tokenColumn });
      continue;
    }
    // Identifier, number or literal: everything up to whitespace, a punctuator, a quote or a comment.
    let word = "";
    while (i < text.length) {
      const c = text[i] as string;
      if (/\s/.test(c) || PUNCTUATORS.has(c) || c === '"' || c === "'") break;
      if (c === "/" && (text[i + 1] === "/" || text[i + 1] === "*")) break;
      word += c;
      step();
    }
    tokens.push({ kind: "word", value: decodeEscapes(word), line: tokenLine, column: tokenColumn });
  }
  return { tokens, unterminated: false };
}

const SIMPLE_ESCAPES: Record<string, string> = {
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "0": "\0",
};

/** Decodes JSON5 string / identifier escapes (`\n`, `\xHH`, `\uXXXX`, line continuations, `\<char>`). */
function decodeEscapes(raw: string): string {
  if (!raw.includes("\\")) return raw;
  let out = "";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const next = raw[i + 1];
    if (next === undefined) break;
    i++;
    if (next === "x" && /^[0-9a-fA-F]{2}$/.test(raw.slice(i + 1, i + 3))) {
      out += String.fromCharCode(Number.parseInt(raw.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (next === "u" && /^[0-9a-fA-F]{4}$/.test(raw.slice(i + 1, i + 5))) {
      out += String.fromCharCode(Number.parseInt(raw.slice(i + 1, i + 5), 16));
      i += 4;
    } else if (next === "\n" || next === "\r" || next === "\u2028" || next === "\u2029") {
      // Line continuation: the escaped break is not part of the value ("\r\n" was stored as "\r\n").
      if (next === "\r" && raw[i + 1] === "\n") i++;
    } else {
      out += SIMPLE_ESCAPES[next] ?? next;
    }
  }
  return out;
}

/** A stable map key for a path. */
function pathKey(path: Json5Path): string {
  return JSON.stringify(path);
}

/** True when the text holds no value at all: only whitespace and (closed) comments. Such a file means `{}`. */
export function isBlankJson5(text: string): boolean {
  const { tokens, unterminated } = lex(text);
  return tokens.length === 0 && !unterminated;
}

/** Builds a locator for `text`. Cheap enough to build once per error report. */
export function locateJson5(text: string): Json5Locator {
  const { tokens } = lex(text);
  const found = new Map<string, { path: Json5Path; location: Json5Location }>();
  const duplicated = new Map<string, Json5Duplicate>();
  let pos = 0;

  const record = (path: Json5Path, token: Token): void => {
    const key = pathKey(path);
    // Delete first so a duplicate key moves to its last occurrence, as JSON5.parse keeps the last value.
    found.delete(key);
    found.set(key, { path, location: { line: token.line, column: token.column } });
  };

  // Parses one value at `path`. Always consumes at least one token when any are left (so it terminates).
  const parseValue = (path: Json5Path): void => {
    const token = tokens[pos];
    if (token === undefined) return;
    pos++;
    if (token.kind !== "punct") return;
    if (token.value === "{") {
      parseObject(path);
    } else if (token.value === "[") {
      parseArray(path);
    }
  };

  const parseObject = (path: Json5Path): void => {
    // Keys of this object instance only: the same key in two sibling objects is no duplicate.
    const seen = new Map<string, Json5Location>();
    while (pos < tokens.length) {
      const keyToken = tokens[pos] as Token;
      if (keyToken.kind === "punct") {
        pos++;
        if (keyToken.value === "}") return;
        continue; // a stray ',' (trailing comma) or damage: skip it
      }
      pos++;
      const keyPath = [...path, keyToken.value];
      const location = { line: keyToken.line, column: keyToken.column };
      const earlier = seen.get(keyToken.value);
      if (earlier !== undefined) {
        const key = pathKey(keyPath);
        const entry = duplicated.get(key) ?? { path: keyPath, locations: [earlier] };
        entry.locations.push(location);
        duplicated.set(key, entry);
      } else {
        seen.set(keyToken.value, location);
      }
      record(keyPath, keyToken);
      if (tokens[pos]?.value !== ":" || tokens[pos]?.kind !== "punct") continue;
      pos++;
      parseValue(keyPath);
    }
  };

  const parseArray = (path: Json5Path): void => {
    let index = 0;
    while (pos < tokens.length) {
      const token = tokens[pos] as Token;
      if (token.kind === "punct" && token.value === "]") {
        pos++;
        return;
      }
      if (token.kind === "punct" && (token.value === "," || token.value === ":" || token.value === "}")) {
        pos++;
        continue;
      }
      const elementPath = [...path, index];
      record(elementPath, token);
      parseValue(elementPath);
      index++;
    }
  };

  const first = tokens[0];
  const root = first ? { line: first.line, column: first.column } : { line: 1, column: 1 };
  while (pos < tokens.length) parseValue([]);

  const at = (path: Json5Path): Json5Location | undefined => {
    if (path.length === 0) return root;
    return found.get(pathKey(path))?.location;
  };

  return {
    at,
    nearest(path) {
      for (let length = path.length; length >= 0; length--) {
        const prefix = path.slice(0, length);
        const location = at(prefix);
        if (location) return { path: prefix, location };
      }
      return undefined;
    },
    paths() {
      return [...found.values()].map((entry) => entry.path);
    },
    duplicates() {
      return [...duplicated.values()];
    },
  };
}
