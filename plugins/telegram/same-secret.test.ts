import { describe, expect, it } from "vitest";
import { sameSecret } from "./same-secret.js";

describe("sameSecret", () => {
  it("is true only for the whole secret: same length but one byte off is refused", () => {
    expect(sameSecret("s3cret-value", "s3cret-value")).toBe(true);
    expect(sameSecret("s3cret-valuf", "s3cret-value")).toBe(false);
    expect(sameSecret("x3cret-value", "s3cret-value")).toBe(false);
    expect(sameSecret("s3cret", "s3cret-value")).toBe(false);
    expect(sameSecret("", "s3cret-value")).toBe(false);
  });
});
