import { describe, expect, it } from "vitest";
import { GATEWAY_HEAP_GROWING_PERCENT, GATEWAY_INTERRUPT_BUDGET, gatewayV8Flags } from "./gateway-v8.js";

describe("gatewayV8Flags", () => {
  const heap = `--heap-growing-percent=${GATEWAY_HEAP_GROWING_PERCENT}`;
  const budget = `--interrupt-budget=${GATEWAY_INTERRUPT_BUDGET}`;

  it("sets the heap growth and the interrupt budget", () => {
    expect(gatewayV8Flags([])).toEqual([heap, budget]);
    expect(gatewayV8Flags(["--enable-source-maps", "--max-old-space-size=512"])).toEqual([heap, budget]);
  });

  it("leaves out each flag the person gave node (dashes or underscores)", () => {
    expect(gatewayV8Flags(["--heap-growing-percent=80"])).toEqual([budget]);
    expect(gatewayV8Flags(["--trace-gc", "--heap_growing_percent=20"])).toEqual([budget]);
    expect(gatewayV8Flags(["--interrupt-budget=1000"])).toEqual([heap]);
    expect(gatewayV8Flags(["--interrupt_budget=1000", "--heap-growing-percent=50"])).toEqual([]);
  });

  it("does not take a longer flag for one of its own", () => {
    expect(gatewayV8Flags(["--interrupt-budget-for-feedback-allocation=100"])).toEqual([heap, budget]);
    expect(gatewayV8Flags(["--heap-growing-percent-max=5"])).toEqual([heap, budget]);
  });
});
