/**
 * The terminal chat (`clawdis chat`). A client of the gateway's HTTP API, not a plugin: it has no
 * definePlugin export and the gateway never loads it; the CLI calls `runTerminalChat`.
 */
export { type AttachOptions, runAttach } from "./attach.js";
export { runTerminalChat, type TerminalChatOptions } from "./chat.js";
