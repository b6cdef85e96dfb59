import { describe, expect, it } from "vitest";
import { redactArguments } from "./redact-arguments.js";

describe("redactArguments", () => {
  it.each([
    ['{"command":"cat ~/.ssh/id_rsa"}', "{command: <17 chars>}"],
    [
      '{"path":"a.txt","content":"secret","n":3,"flag":true,"list":[1,2],"o":{"a":1},"z":null}',
      "{path: <5 chars>, content: <6 chars>, n: <number>, flag: <boolean>, list: <array of 2>, o: <object of 1 keys>, z: <null>}",
    ],
    ["", "{}"],
    ["not json", "<not JSON, 8 chars>"],
    ["[1]", "<array of 1>"],
  ])("%s → %s", (input, expected) => {
    expect(redactArguments(input)).toBe(expected);
    expect(redactArguments(input)).not.toContain("secret");
  });
});
