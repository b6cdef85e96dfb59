import { once } from "node:events";
import { type WebSocket, WebSocketServer } from "ws";
import { type WaitOptions, waitWithDeadline } from "../helpers/wait-deadline.js";

/**
 * A WebSocket server on 127.0.0.1 that stands where WhatsApp's would: it accepts connections and never answers
 * (Baileys checks the real server's certificate, so no fake can complete the handshake). It records every
 * connection, so a test sees how many sockets a client opened and when, and can drop them (a network error).
 */
export interface FakeWhatsappServer {
  /** `ws://127.0.0.1:<port>/ws/chat`, for `whatsapp.socketUrl`. */
  url: string;
  /** Connections accepted so far (open or closed). */
  readonly connections: number;
  /** Connections open now. */
  readonly open: number;
  /** Resolves when the server has accepted `n` connections in all (rejects after `timeoutMs`, saying so). */
  waitForConnections(n: number, options?: WaitOptions): Promise<void>;
  /** Resolves when no connection is open (rejects after `timeoutMs`, saying so). */
  waitForNoneOpen(options?: WaitOptions): Promise<void>;
  /** Drops every open connection (the client sees a network error). */
  dropAll(): void;
  close(): Promise<void>;
}

export async function startFakeWhatsappServer(): Promise<FakeWhatsappServer> {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await once(server, "listening");
  const clients = new Set<WebSocket>();
  let connections = 0;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  server.on("connection", (socket) => {
    connections += 1;
    clients.add(socket);
    socket.on("close", () => {
      clients.delete(socket);
      notify();
    });
    socket.on("error", () => {});
    notify();
  });
  const waitUntil = (done: () => boolean, what: () => string, options: WaitOptions = {}) =>
    waitWithDeadline<void>(
      () => `${what()} at the fake WhatsApp server`,
      options.timeoutMs,
      (resolve) => {
        const check = () => {
          if (done()) resolve();
        };
        waiters.add(check);
        check();
        return () => waiters.delete(check);
      },
    );
  const address = server.address();
  if (typeof address !== "object" || address === null)
    throw new Error("the fake WhatsApp server has no port");
  return {
    url: `ws://127.0.0.1:${address.port}/ws/chat`,
    get connections() {
      return connections;
    },
    get open() {
      return clients.size;
    },
    waitForConnections: (n, options) =>
      waitUntil(
        () => connections >= n,
        () => `${n} connections (${connections} so far)`,
        options,
      ),
    waitForNoneOpen: (options) =>
      waitUntil(
        () => clients.size === 0,
        () => `no open connection (${clients.size} open)`,
        options,
      ),
    dropAll() {
      for (const client of clients) client.terminate();
    },
    async close() {
      for (const client of clients) client.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
