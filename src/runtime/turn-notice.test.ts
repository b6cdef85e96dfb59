import { describe, expect, it } from "vitest";
import { formatTurnNotice } from "./turn-notice.js";

const READY = "The session is ready for your next message.";

describe("formatTurnNotice", () => {
  it.each<[string, string, string]>([
    [
      "a question keeps its question mark and gets no period",
      "model endpoint http://127.0.0.1:1/v1 refused the connection: is the server running?",
      "Model endpoint http://127.0.0.1:1/v1 refused the connection: is the server running?",
    ],
    ["a plain text gets a period", "the model did not answer in time", "The model did not answer in time."],
    ["a text ending in a period keeps one", "the turn failed.", "The turn failed."],
    ["an exclamation mark stays", "out of quota!", "Out of quota!"],
    ["an ellipsis stays", "the server said: Internal err…", "The server said: Internal err…"],
    ["a quote after the period stays", `the server said "try later."`, `The server said "try later."`],
    ["a bracket after the question mark stays", "failed (is it up?)", "Failed (is it up?)"],
    ["a sentence ending in a bracket gets a period", "failed (502)", "Failed (502)."],
    ["trailing spaces and a colon go", "the model said:  ", "The model said."],
    ["an upper-case start stays", "Model 'gpt-4o' not found at x", "Model 'gpt-4o' not found at x."],
    ["a URL keeps its case", "http://host:1/v1 is down", "http://host:1/v1 is down."],
    ["an identifier keeps its case", "send_file failed", "send_file failed."],
    ["a quoted start keeps its case", "'x' is not a model", "'x' is not a model."],
    ["a bare timeout reads as words", "timeout", "The model did not answer in time."],
    ["a bare tool-loop reads as words", "tool-loop", "The agent kept calling tools without answering."],
    [
      "a bare output-limit reads as words",
      "output-limit",
      "The model's answer hit the output limit and was cut off.",
    ],
    ["a bare error reads as words", "error", "The turn failed."],
    ["a stray period after a question mark goes", "is it up?.", "Is it up?"],
    ["an empty text", "", "The turn failed."],
    ["only spaces", "   ", "The turn failed."],
  ])("%s", (_name, error, why) => {
    expect(formatTurnNotice(error)).toBe(`⚠️ ${why} ${READY}`);
  });

  it("never doubles the punctuation before the session sentence", () => {
    for (const error of ["a?", "a.", "a!", "a…", "a", "a?.", "is it?  "]) {
      expect(formatTurnNotice(error)).not.toMatch(/[.?!…]\. The session/);
    }
  });
});
