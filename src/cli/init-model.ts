/** The endpoint's models as a numbered list, one a line, for the terminal question. Pure. */
export function numberedModels(models: readonly string[]): string {
  return models
    .map((model, i) => `  ${String(i + 1).padStart(String(models.length).length)}) ${model}`)
    .join("\n");
}

export type ModelPick = { ok: true; model: string; listed: boolean } | { ok: false; error: string };

/**
 * The model an answer names: a number from the list (1-based), else a name: the listed one when it matches but
 * for case, else the name as typed (`listed: false`: the endpoint did not list it; it may still serve it). Pure;
 * an empty answer is the caller's default, not decided here.
 */
export function pickModel(answer: string, models: readonly string[]): ModelPick {
  const given = answer.trim();
  if (/^\d+$/.test(given) && !models.includes(given)) {
    const n = Number(given);
    if (n >= 1 && n <= models.length) return { ok: true, model: models[n - 1]!, listed: true };
    return {
      ok: false,
      error:
        models.length > 0
          ? `there is no model ${n}: choose 1 to ${models.length}, or type a name`
          : `${given} is not a model name`,
    };
  }
  if (models.includes(given)) return { ok: true, model: given, listed: true };
  const other = models.find((m) => m.toLowerCase() === given.toLowerCase());
  if (other !== undefined) return { ok: true, model: other, listed: true };
  return { ok: true, model: given, listed: false };
}
