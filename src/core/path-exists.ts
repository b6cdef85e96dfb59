import { access } from "node:fs/promises";

/** Whether something exists at `path` (any error, such as a missing parent, counts as no). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
