import { describe, expect, it } from "vitest";
import { GATEWAY_HEAP_GROWING_PERCENT, gatewayHeapFlag } from "./gateway-heap.js";

describe("gatewayHeapFlag", () => {
  it("sets the gateway's heap growth unless the person set their own", () => {
    const ours = `--heap-growing-percent=${GATEWAY_HEAP_GROWING_PERCENT}`;
    expect(gatewayHeapFlag([], undefined)).toBe(ours);
    expect(gatewayHeapFlag(["--enable-source-maps"], "--max-old-space-size=512")).toBe(ours);
    expect(gatewayHeapFlag(["--heap-growing-percent=80"], undefined)).toBeUndefined();
    expect(gatewayHeapFlag([], "--trace-gc --heap_growing_percent=20")).toBeUndefined();
  });
});
