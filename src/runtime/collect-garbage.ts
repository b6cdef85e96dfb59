import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

let gc: (() => void) | undefined;

/**
 * A full garbage collection now, after which V8 gives the pages it no longer needs back to the system. V8 does
 * that by itself only under memory pressure or after long idleness, so a gateway that has just unloaded thousands
 * of idle sessions would otherwise keep the memory their burst took (docs/runtime.md, Passivation). Made
 * available by turning on V8's `gc` for a new context (no command-line flag needed); `node --expose-gc` works too.
 */
export function collectGarbage(): void {
  if (!gc) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (typeof exposed === "function") gc = exposed;
    else {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as () => void;
    }
  }
  gc();
}
