import type { Json5Path } from "./json5-locate.js";

/** `a.b[0]["odd key"]`; the top-level value is `(top level)`. */
export function formatPath(path: Json5Path): string {
  if (path.length === 0) return "(top level)";
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out.length === 0 ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}
