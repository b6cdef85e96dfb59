import { EventEmitter } from "node:events";
import {
  definePlugin,
  type InboundMessage,
  type OutboundMessage,
  PLUGIN_API_VERSION,
  type PluginContext,
  type PluginDefinition,
} from "../../src/plugin-api/index.js";
import { type WaitOptions, waitWithDeadline } from "./wait-deadline.js";

/**
 * A transport for in-process gateway tests: `inject` hands a message in like a chat app would; every send is
 * recorded in `sent`, and `waitForSent(n)` resolves once n messages were sent (events, not sleeps).
 */
export class TestTransport {
  readonly sent: OutboundMessage[] = [];
  readonly allowed = new Set<string>(["alice", "bob"]);
  /** The allowed senders who are the owner (the others are `allowed`): the primary session's tools are theirs. */
  readonly owners = new Set<string>(["alice"]);
  /** Senders let in as `untrusted` (as a member of an allowed group is): not on the allowlist. */
  readonly untrusted = new Set<string>();
  /** Read on every send, so a test may change it after start. */
  maxTextLength = 4000;
  /** While set, every send fails with this message (the chat app is unreachable). */
  failSends: string | undefined;
  /** After this many successful sends, every send fails (a chat app that went away mid-reply). */
  failAfter: number | undefined;
  /** While true, the transport's health is "down" (reconnecting): the gateway parks what it would send. */
  down = false;
  /** When set, `start()` waits for it (a transport still connecting); `inject` works meanwhile. */
  startGate: Promise<void> | undefined;
  /** When set, called as the gateway starts the transport (before `startGate`): a chat app handing in at once. */
  onStart: (() => void) | undefined;
  /** Whether the transport sends attachments (else the core names them in the text). */
  attachments = false;
  context: PluginContext | undefined;
  readonly plugin: PluginDefinition;
  private readonly emitter = new EventEmitter();
  private nextId = 1;

  constructor(id = "chat") {
    const self = this;
    this.plugin = definePlugin({
      apiVersion: PLUGIN_API_VERSION,
      id,
      create: (context) => {
        self.context = context;
        return {
          transport: {
            capabilities: {
              get maxTextLength() {
                return self.maxTextLength;
              },
              get attachments() {
                return self.attachments;
              },
            },
            health: () =>
              self.down ? { state: "down" as const, detail: "reconnecting" } : { state: "ok" as const },
            authorize: (message: InboundMessage) =>
              self.allowed.has(message.senderId)
                ? {
                    allowed: true as const,
                    authority: self.owners.has(message.senderId) ? ("owner" as const) : ("allowed" as const),
                  }
                : self.untrusted.has(message.senderId)
                  ? { allowed: true as const, authority: "untrusted" as const }
                  : { allowed: false as const, reason: "not in the test allowlist" },
            send: async (message: OutboundMessage) => {
              if (self.failSends) throw new Error(self.failSends);
              if (self.failAfter !== undefined && self.sent.length >= self.failAfter)
                throw new Error("the chat app went away");
              self.sent.push(message);
              self.emitter.emit("sent", self.sent.length);
              return { messageId: `out-${self.sent.length}` };
            },
          },
          start: async () => {
            self.onStart?.();
            await self.startGate;
          },
        };
      },
    });
  }

  /** Hands a message in; fields default to a direct message from alice in chat "c-alice". */
  inject(partial: Partial<InboundMessage> & { text: string }) {
    if (!this.context) throw new Error("the test transport is not started");
    const message: InboundMessage = {
      channel: this.plugin.id,
      chatId: "c-alice",
      chatType: "direct",
      senderId: "alice",
      // The name follows the id unless given: "bob" is "Bob" (the model is shown names in groups and shared chats).
      senderName: partial.senderId
        ? partial.senderId.charAt(0).toUpperCase() + partial.senderId.slice(1)
        : "Alice",
      messageId: `m${this.nextId++}`,
      receivedAt: Date.now(),
      ...partial,
    };
    return this.context.receive(message);
  }

  /** Resolves once `count` messages were sent; rejects after `timeoutMs` (default WAIT_DEADLINE_MS), saying what was. */
  waitForSent(count: number, options: WaitOptions = {}): Promise<OutboundMessage[]> {
    return waitWithDeadline<OutboundMessage[]>(
      () =>
        `${count} sends through the test transport (${this.sent.length} so far${this.sent.length > 0 ? `, the last: ${JSON.stringify(this.sent.at(-1)?.text.slice(0, 120))}` : ""})`,
      options.timeoutMs,
      (resolve) => {
        const onSent = () => {
          if (this.sent.length >= count) resolve(this.sent.slice());
        };
        this.emitter.on("sent", onSent);
        onSent();
        return () => this.emitter.off("sent", onSent);
      },
    );
  }

  textsTo(chatId: string): string[] {
    return this.sent.filter((m) => m.chatId === chatId).map((m) => m.text);
  }
}
