import type { WASocket } from "@whiskeysockets/baileys";

/**
 * Ends a Baileys socket for good, timers included. Baileys' `end()` removes the WebSocket's `close` listeners
 * before closing it, so a handshake still waiting for WhatsApp's answer never hears the close and keeps its
 * `connectTimeoutMs` timer (20 s) running, which holds the process open after stop. The handshake also listens
 * for `error`: emitting one after `end()` settles it and clears that timer.
 */
export function endSocket(sock: WASocket): void {
  sock.end(undefined);
  if (sock.ws.listenerCount("error") > 0) sock.ws.emit("error", new Error("the socket was ended"));
}
