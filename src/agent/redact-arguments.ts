/**
 * Tool-call arguments as a debug log line may show them: the keys, and for each value only its type and size
 * (never the value: a command, a file's content or a secret). Invalid JSON shows as its length. Pure.
 */
export function redactArguments(json: string): string {
  let parsed: unknown;
  try {
    parsed = json.trim() === "" ? {} : JSON.parse(json);
  } catch {
    return `<not JSON, ${json.length} chars>`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return `<${describe(parsed)}>`;
  const parts = Object.entries(parsed).map(([key, value]) => `${key}: <${describe(value)}>`);
  return `{${parts.join(", ")}}`;
}

function describe(value: unknown): string {
  if (typeof value === "string") return `${value.length} chars`;
  if (Array.isArray(value)) return `array of ${value.length}`;
  if (value === null) return "null";
  if (typeof value === "object") return `object of ${Object.keys(value).length} keys`;
  return typeof value;
}
