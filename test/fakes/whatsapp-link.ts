import { mkdir } from "node:fs/promises";
import makeWASocket, {
  type AnyMessageContent,
  type MiscMessageGenerationOptions,
  type UserFacingSocketConfig,
  type WAMessageKey,
  type WASocket,
} from "@whiskeysockets/baileys";
import { credentialsDir, openAuthState } from "../../plugins/whatsapp/auth-state.js";
import { type WaitOptions, waitWithDeadline } from "../helpers/wait-deadline.js";
import { endOfflineBacklog, linkedCreds } from "./whatsapp-peer.js";

/**
 * The sockets a WhatsApp plugin under test opens: each is a real Baileys socket (its config as the plugin made
 * it, pointed at the loopback server, with long timeouts), kept so the test can emit on it, with the three calls
 * that need WhatsApp's real server to settle (`sendMessage`, `sendPresenceUpdate`, `readMessages`) recorded
 * instead of sent.
 */

export interface SentMessage {
  jid: string;
  content: AnyMessageContent;
  options?: MiscMessageGenerationOptions;
  /** Which socket (0 = the first the plugin opened) sent it. */
  socket: number;
}

export interface RecordedCall<T> {
  items: T[];
  /**
   * Resolves when at least `n` calls were recorded; rejects after `timeoutMs` (default WAIT_DEADLINE_MS) naming
   * the call and how many there were.
   */
  waitFor(n: number, options?: WaitOptions): Promise<T[]>;
}

function recorder<T>(name: string): RecordedCall<T> & { push(item: T): void } {
  const items: T[] = [];
  const waiters = new Set<() => void>();
  return {
    items,
    push(item) {
      items.push(item);
      for (const waiter of [...waiters]) waiter();
    },
    waitFor(n, options = {}) {
      return waitWithDeadline<T[]>(
        () => `${n} ${name} (${items.length} so far)`,
        options.timeoutMs,
        (resolve) => {
          const check = () => {
            if (items.length >= n) resolve(items);
          };
          waiters.add(check);
          check();
          return () => waiters.delete(check);
        },
      );
    },
  };
}

export interface SocketRecorder {
  makeSocket: (config: UserFacingSocketConfig) => WASocket;
  sockets: RecordedCall<WASocket>;
  sent: RecordedCall<SentMessage>;
  presence: RecordedCall<{ kind: string; jid: string | undefined }>;
  read: RecordedCall<WAMessageKey>;
  /** Phone numbers a pairing code was asked for (answered with PAIRING_CODE). */
  pairing: RecordedCall<string>;
  /** Sockets (by index) that were asked to log out. */
  logouts: RecordedCall<number>;
}

/** The pairing code the recorded sockets hand out. */
export const PAIRING_CODE = "ABCD1234";

export function recordSockets(): SocketRecorder {
  const sockets = recorder<WASocket>("sockets opened");
  const sent = recorder<SentMessage>("messages sent");
  const presence = recorder<{ kind: string; jid: string | undefined }>("presence updates");
  const read = recorder<WAMessageKey>("read receipts");
  const pairing = recorder<string>("pairing code requests");
  const logouts = recorder<number>("logout requests");
  return {
    sockets,
    sent,
    presence,
    read,
    pairing,
    logouts,
    makeSocket(config) {
      const sock = makeWASocket({ ...config, connectTimeoutMs: 600_000, keepAliveIntervalMs: 600_000 });
      const index = sockets.items.length;
      sock.sendMessage = async (jid, content, options) => {
        sent.push({ jid, content, ...(options ? { options } : {}), socket: index });
        return undefined;
      };
      sock.sendPresenceUpdate = async (kind, jid) => {
        presence.push({ kind, jid });
      };
      sock.readMessages = async (keys) => {
        for (const key of keys) read.push(key);
      };
      sock.requestPairingCode = async (phone) => {
        pairing.push(phone);
        return PAIRING_CODE;
      };
      sock.logout = async () => {
        logouts.push(index);
      };
      sockets.push(sock);
      return sock;
    },
  };
}

/** Resolves when `sock`'s WebSocket is open (frames can be sent: receipts, acks). */
export async function socketOpen(sock: WASocket): Promise<void> {
  if (sock.ws.isOpen) return;
  await new Promise<void>((resolve) => sock.ws.once("open", () => resolve()));
}

/**
 * Brings a socket to "linked": its WebSocket open, the offline backlog done, and the `open` connection update
 * WhatsApp's server would cause (no fake can complete the real handshake).
 */
export async function linkUp(sock: WASocket): Promise<void> {
  await socketOpen(sock);
  endOfflineBacklog(sock);
  sock.ev.emit("connection.update", { connection: "open" });
}

/** Closes `sock` as WhatsApp would with `reason` (a `<failure reason=…>` node: 401 logged out, 440 replaced, …). */
export function failSocket(sock: WASocket, reason: number): void {
  sock.ws.emit("CB:failure", { tag: "failure", attrs: { reason: String(reason) } });
}

/** Writes linked credentials for the account `phone`/`lid` into `<stateDir>/credentials/whatsapp/`. */
export async function writeLinkedCredentials(stateDir: string, phone: string, lid: string): Promise<void> {
  const dir = credentialsDir(stateDir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const auth = await openAuthState(dir);
  Object.assign(auth.state.creds, linkedCreds(phone, lid));
  await auth.saveCreds();
}

/** WhatsApp's `<iq type=set><pair-device>` with `refs.length` QR refs: Baileys shows one QR code per ref. */
export function offerPairing(sock: WASocket, refs: string[]): void {
  sock.ws.emit("CB:iq,type:set,pair-device", {
    tag: "iq",
    attrs: { id: "pair-1", type: "set", from: "s.whatsapp.net" },
    content: [
      {
        tag: "pair-device",
        attrs: {},
        content: refs.map((ref) => ({ tag: "ref", attrs: {}, content: Buffer.from(ref) })),
      },
    ],
  });
}

/** WhatsApp's `<stream:error code=…>` (515: restart required, as after pairing). */
export function streamError(sock: WASocket, code: number): void {
  sock.ws.emit("CB:stream:error", { tag: "stream:error", attrs: { code: String(code) } });
}
