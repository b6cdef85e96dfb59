import {
  type AuthenticationCreds,
  addTransactionCapability,
  type BinaryNode,
  Curve,
  encodeWAMessage,
  generateSignalPubKey,
  initAuthCreds,
  type proto,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type WASocket,
} from "@whiskeysockets/baileys";
import { makeLibSignalRepository } from "@whiskeysockets/baileys/lib/Signal/libsignal.js";

/**
 * Fake WhatsApp peers for tests that drive Baileys' real receive path (ECOSYSTEM.md, "Baileys without WhatsApp's
 * servers"): each peer has its own Baileys signal repository, is given one one-time pre-key of the receiving
 * socket, encrypts a real `proto.Message` for it (`pkmsg`), and the message is wrapped in the `<message>` binary
 * node WhatsApp's server would send. `deliver` emits it on the socket (`sock.ws.emit("CB:message", node)`):
 * Baileys decrypts it, sends its receipt and emits a real `messages.upsert`.
 */

type AnyLogger = Parameters<typeof makeLibSignalRepository>[1];

/** A signal key store in memory (a peer's; the receiver uses the plugin's own files). */
export function memoryKeyStore(): SignalKeyStore {
  const data = new Map<string, unknown>();
  return {
    get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = data.get(`${type}/${id}`);
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set(set: SignalDataSet) {
      for (const [type, values] of Object.entries(set)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null || value === undefined) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
      }
    },
  };
}

export const quietLogger: AnyLogger = {
  level: "silent",
  child: () => quietLogger,
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Credentials of a linked account: `me` set (a phone number and a LID), the initial sync counted as done. */
export function linkedCreds(phone: string, lid: string, name = "Clawd"): AuthenticationCreds {
  const creds = initAuthCreds();
  creds.me = { id: `${phone}:7@s.whatsapp.net`, lid: `${lid}:7@lid`, name };
  creds.accountSyncCounter = 1;
  creds.registered = true;
  return creds;
}

export interface PeerMessage {
  /** The message id (`key.id`). */
  id: string;
  message: proto.IMessage;
  /** A group JID: the message is posted in that group by this peer. */
  group?: string;
  /** Delivered while the account was offline (Baileys upserts it as `append`). */
  offline?: boolean;
  /** The peer's display name (push name). */
  pushName?: string;
  /** For an own message sent from another device of the account: the chat it was sent in. */
  recipient?: string;
  /** Seconds since the epoch. */
  t?: number;
  /** The peer writes as its LID (LID addressing), with its phone number in `sender_pn` unless false. */
  asLid?: { withPhone: boolean };
}

export class FakePeer {
  private readonly repository;
  private readonly creds: AuthenticationCreds;
  private readonly sessionFor = new WeakSet<WASocket>();

  /**
   * @param phone the peer's phone number, digits only ("4915112345678")
   * @param lid the peer's LID user ("123456789012345")
   */
  constructor(
    readonly phone: string,
    readonly lid: string,
    /** A device number: another device of the account itself is `phone` with a device other than the socket's. */
    readonly device = 0,
  ) {
    this.creds = initAuthCreds();
    const keys = addTransactionCapability(memoryKeyStore(), quietLogger, {
      maxCommitRetries: 1,
      delayBetweenTriesMs: 1,
    });
    this.repository = makeLibSignalRepository({ creds: this.creds, keys }, quietLogger);
  }

  get jid(): string {
    return this.device ? `${this.phone}:${this.device}@s.whatsapp.net` : `${this.phone}@s.whatsapp.net`;
  }

  get lidJid(): string {
    return this.device ? `${this.lid}:${this.device}@lid` : `${this.lid}@lid`;
  }

  /**
   * Gives `sock` one one-time pre-key for this peer, opens this peer's session to it, and seeds the socket's
   * LID↔phone mapping for the peer (else decrypting waits a minute on a usync query).
   */
  async introduce(sock: WASocket, creds: AuthenticationCreds): Promise<void> {
    const me = creds.me;
    if (!me?.id) throw new Error("the receiving socket's creds have no me.id");
    if (this.sessionFor.has(sock)) return;
    const preKeyId = 100_000 + Math.floor(Math.random() * 1_000_000);
    const preKey = Curve.generateKeyPair();
    await sock.authState.keys.set({ "pre-key": { [String(preKeyId)]: preKey } });
    await sock.signalRepository.lidMapping.storeLIDPNMappings([{ lid: this.lidJid, pn: this.jid }]);
    await this.repository.injectE2ESession({
      jid: me.id,
      session: {
        registrationId: creds.registrationId,
        identityKey: generateSignalPubKey(creds.signedIdentityKey.public),
        signedPreKey: {
          keyId: creds.signedPreKey.keyId,
          publicKey: generateSignalPubKey(creds.signedPreKey.keyPair.public),
          signature: creds.signedPreKey.signature,
        },
        preKey: { keyId: preKeyId, publicKey: generateSignalPubKey(preKey.public) },
      },
    });
    this.sessionFor.add(sock);
  }

  /** The binary node WhatsApp's server would send for `message`, encrypted for `sock`'s account. */
  async node(sock: WASocket, creds: AuthenticationCreds, message: PeerMessage): Promise<BinaryNode> {
    await this.introduce(sock, creds);
    const me = creds.me;
    if (!me?.id) throw new Error("the receiving socket's creds have no me.id");
    const { type, ciphertext } = await this.repository.encryptMessage({
      jid: me.id,
      data: encodeWAMessage(message.message),
    });
    const author = message.asLid ? this.lidJid : this.jid;
    const attrs: Record<string, string> = {
      id: message.id,
      t: String(message.t ?? Math.floor(Date.now() / 1000)),
      type: "text",
    };
    if (message.pushName) attrs.notify = message.pushName;
    if (message.offline) attrs.offline = "1";
    if (message.group) {
      attrs.from = message.group;
      attrs.participant = author;
      if (message.asLid) {
        attrs.addressing_mode = "lid";
        if (message.asLid.withPhone) attrs.participant_pn = this.jid;
      }
    } else {
      attrs.from = author;
      if (message.recipient) attrs.recipient = message.recipient;
      if (message.asLid) {
        attrs.addressing_mode = "lid";
        if (message.asLid.withPhone) attrs.sender_pn = this.jid;
      }
    }
    return { tag: "message", attrs, content: [{ tag: "enc", attrs: { v: "2", type }, content: ciphertext }] };
  }

  /** Emits `message` on `sock` as WhatsApp's server would deliver it. */
  async deliver(sock: WASocket, creds: AuthenticationCreds, message: PeerMessage): Promise<BinaryNode> {
    const node = await this.node(sock, creds, message);
    sock.ws.emit("CB:message", node);
    return node;
  }
}

/** Tells `sock` the offline backlog is done (`<ib><offline count=0/></ib>`), which flushes its buffered events. */
export function endOfflineBacklog(sock: WASocket): void {
  sock.ws.emit("CB:ib,,offline", {
    tag: "ib",
    attrs: {},
    content: [{ tag: "offline", attrs: { count: "0" } }],
  });
}
