import { isAbsolute, resolve } from "node:path";

/** How many answers `absolutePath` keeps (then it starts over): a transcript per chat in use, for ~1,000 chats. */
const MAX_PATHS = 1024;
const answers = new Map<string, string>();

/**
 * `resolve(path)`, remembered for absolute paths: a message's turn resolves its transcript's path several times
 * (the append order, the open writer, the warm tail), and each `resolve` builds its answer anew. Contract: the same
 * string `resolve` gives; a relative path is resolved each time (its answer depends on the working directory).
 */
export function absolutePath(path: string): string {
  if (!isAbsolute(path)) return resolve(path);
  let answer = answers.get(path);
  if (answer === undefined) {
    answer = resolve(path);
    if (answers.size >= MAX_PATHS) answers.clear();
    answers.set(path, answer);
  }
  return answer;
}
