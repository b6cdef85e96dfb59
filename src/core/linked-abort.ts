/**
 * An AbortController that also aborts, with the parent's reason, when `parent` aborts (at once if it already
 * has). What `AbortSignal.any` does for two signals, without its cost (~12 µs a call, made for every model call)
 * and without holding the child until the parent is collected: `dispose` unlinks it, and must be called once
 * the child is no longer used.
 */
export function linkedAbort(parent: AbortSignal | undefined): {
  controller: AbortController;
  dispose(): void;
} {
  const controller = new AbortController();
  if (!parent) return { controller, dispose: () => {} };
  const forward = () => controller.abort(parent.reason);
  if (parent.aborted) {
    forward();
    return { controller, dispose: () => {} };
  }
  parent.addEventListener("abort", forward, { once: true });
  return { controller, dispose: () => parent.removeEventListener("abort", forward) };
}
