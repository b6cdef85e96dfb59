/**
 * The session side's entry point as the gateway knows it: `SessionRunner` is the session worker
 * (`session/session-worker.ts`), built from one `SessionPorts` object. See docs/runtime.md, How the session
 * side is built.
 */
export type { SessionPorts as SessionRunnerDeps } from "./session/ports.js";
export { quoteLine } from "./session/prepare-message.js";
export { SessionWorker as SessionRunner } from "./session/session-worker.js";
export { RECORD_DEFER_MS } from "./session/turn-bookkeeping.js";
export { DEFAULT_SYSTEM_PROMPT } from "./session/turn-input.js";
export type { WorkItem } from "./work-item.js";
