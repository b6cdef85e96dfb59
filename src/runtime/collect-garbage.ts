import { runInNewContext } from "node:vm";
import { setV8Flags } from "../core/v8-flags.js";

let gc: (() => void) | undefined;

/** How a collection runs: `compact` also moves what survives out of pages that are mostly empty. */
export interface CollectOptions {
  compact?: boolean;
}

/** V8's flag for a compacting full collection, unless the person set it (node flags or NODE_OPTIONS). */
const COMPACT_FLAG = "compact-on-every-full-gc";
const compactFlagGiven = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((arg) =>
  /^--(no-)?compact[-_]on[-_]every[-_]full[-_]gc\b/.test(arg),
);

/**
 * A full garbage collection now, after which V8 gives the pages it no longer needs back to the system. V8 does
 * that by itself only under memory pressure or after long idleness, so a gateway that has just unloaded thousands
 * of idle sessions would otherwise keep the memory their burst took (docs/runtime.md, Passivation). Made
 * available by turning on V8's `gc` for a new context (no command-line flag needed); `node --expose-gc` works too.
 *
 * With `compact`, the collection also moves the survivors out of fragmented pages, so those pages are given back
 * too: after 10,000 sessions were messaged once, a plain collection left the old generation at 2-2.5x what
 * survived (20 MB live in 42-48 MB of pages), a compacting one at 1.05x (RSS 160-166 -> 137-139 MB, measured with
 * the bench's passivation part). It pauses longer and needs room for what it moves, so the registry asks for it
 * only once a burst is over, not while one goes on, and a while after a plain one (whose freed pages are given
 * back meanwhile, so the compaction does not add to the peak). Turned on for this one collection through V8's
 * `--compact-on-every-full-gc` and off again after it; left alone when the person set that flag.
 */
export function collectGarbage(options: CollectOptions = {}): void {
  if (!gc) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === "function") gc = exposed;
    else {
      setV8Flags("--expose-gc");
      gc = runInNewContext("gc") as () => void;
    }
  }
  if (!options.compact || compactFlagGiven) {
    gc();
    return;
  }
  setV8Flags(`--${COMPACT_FLAG}`);
  try {
    gc();
  } finally {
    setV8Flags(`--no-${COMPACT_FLAG}`);
  }
}
