/** The longest session key accepted (keys name files and folders of a session and appear in every log line). */
export const MAX_SESSION_KEY_LENGTH = 256;

/**
 * Why `key` cannot be used as a session key, or undefined when it can. Pure. Refused: anything but a string,
 * the empty string, more than MAX_SESSION_KEY_LENGTH characters (UTF-16 code units), and control characters
 * (U+0000–U+001F, U+007F–U+009F) or line/paragraph separators (U+2028, U+2029), which would break log lines
 * and file names. Everything else is allowed, `constructor` and `__proto__` included (the store has no
 * prototype to confuse them with). The message never repeats a long key in full.
 */
export function whyInvalidSessionKey(key: unknown): string | undefined {
  if (typeof key !== "string")
    return `a session key must be a string, not ${key === null ? "null" : typeof key}`;
  if (key.length === 0) return "a session key must not be empty";
  if (key.length > MAX_SESSION_KEY_LENGTH) {
    return `a session key may be at most ${MAX_SESSION_KEY_LENGTH} characters long; this one has ${key.length}`;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point.
  const control = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.exec(key);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    return `a session key must not contain control characters (U+${code} at position ${control.index + 1})`;
  }
  return undefined;
}
