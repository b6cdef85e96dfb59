import { describe, expect, it } from "vitest";
import { allowFromWarning } from "./allow-from-warning.js";

describe("allowFromWarning", () => {
  it('warns for "*" in inbound.allowFrom', () => {
    expect(allowFromWarning({ inbound: { allowFrom: ["+4915112345678", "*"] } })).toBe(
      'inbound.allowFrom contains "*": anyone who can message this WhatsApp account can talk to the agent',
    );
  });

  it("says nothing for a list of numbers or an empty list", () => {
    expect(allowFromWarning({ inbound: { allowFrom: ["+4915112345678"] } })).toBeUndefined();
    expect(allowFromWarning({ inbound: { allowFrom: [] } })).toBeUndefined();
  });
});
