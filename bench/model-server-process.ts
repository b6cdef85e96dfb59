/**
 * The fake OpenAI-compatible server as a process of its own (`node dist/bench/model-server-process.js`), so
 * that the benches measure the gateway without the model's work on its event loop. Every chat completion is
 * answered at once with the text `model-at:<ns>`: `process.hrtime.bigint()` when the request arrived (its body
 * complete). `process.hrtime` is CLOCK_MONOTONIC, so the bench process subtracts its own send time from it.
 * Prints `{"url": "<base url with /v1>"}` as its first stdout line; exits on SIGTERM or when stdin closes.
 */
import { startFakeOpenAI } from "../test/fakes/openai-server.js";

/** The reply text a bench reads the model's arrival time from. */
export const MODEL_AT = /model-at:(\d+)/;

const fake = await startFakeOpenAI({ keepRequests: false });
fake.setDefault(() => ({ text: `model-at:${process.hrtime.bigint()}`, chunks: 1 }));
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void fake.close().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.stdin.on("end", stop);
process.stdin.resume();
process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
