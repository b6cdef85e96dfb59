import { describe, expect, it } from "vitest";
import { linkedAbort } from "./linked-abort.js";

describe("linkedAbort", () => {
  it("aborts with the parent's reason, at once when the parent already aborted; on its own too", () => {
    const parent = new AbortController();
    const child = linkedAbort(parent.signal);
    child.controller.abort("own");
    expect(parent.signal.aborted).toBe(false);
    expect(child.controller.signal.reason).toBe("own");

    const second = linkedAbort(parent.signal);
    parent.abort("stop");
    expect(second.controller.signal.reason).toBe("stop");
    expect(linkedAbort(parent.signal).controller.signal.reason).toBe("stop");
    expect(linkedAbort(undefined).controller.signal.aborted).toBe(false);
  });

  it("dispose unlinks it: a later abort of the parent leaves the child alone", () => {
    const parent = new AbortController();
    const child = linkedAbort(parent.signal);
    child.dispose();
    parent.abort("stop");
    expect(child.controller.signal.aborted).toBe(false);
  });
});
