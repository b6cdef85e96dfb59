/** `1 problem`, `2 problems`, `0 problems`; `plural` for words that do not just take an `s` (`entry`/`entries`). */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
