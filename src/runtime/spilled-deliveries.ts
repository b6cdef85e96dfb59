import { describeError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { Delivery } from "./delivery.js";
import { SpillStore } from "./outbox-spill.js";

/**
 * The outbox's deliveries past its memory bound (outbox.ts), waiting on disk in the spill folder.
 *
 * Contract:
 * - `put` writes one and returns the stub that stands for it in its lane, with the file's name once written
 *   (undefined, logged, when it could not be: a reply stays in the journal, a notice is dropped). A warning is
 *   logged when the first of an episode goes to disk.
 * - `take` reads one back and removes its file; undefined (logged) when it was not written or cannot be read.
 * - `discard` removes the file of one that will not be sent.
 */
export class SpilledDeliveries {
  private readonly store: SpillStore<Delivery>;
  /** Deliveries waiting on disk now; a warning is logged when the first of an episode goes there. */
  private count = 0;

  constructor(
    dir: string,
    private readonly logger: Logger,
    private readonly maxParkedBytes: number,
  ) {
    this.store = new SpillStore(dir);
  }

  put(delivery: Delivery): { stub: Delivery; spilled: Promise<string | undefined> } {
    if (this.count++ === 0) {
      this.logger.warn("many replies wait for their transport: those past the memory bound wait on disk", {
        channel: delivery.channel,
        maxParkedBytes: this.maxParkedBytes,
      });
    }
    const spilled = this.store.put(delivery).catch((error: unknown) => {
      this.logger.error(
        delivery.jid
          ? "too many replies wait for their transport and one could not be written to disk: it is kept in the journal and sent after the next start"
          : "too many replies wait for their transport and a notice could not be written to disk: it was dropped",
        {
          channel: delivery.channel,
          chatId: delivery.chatId,
          kind: delivery.kind,
          error: describeError(error),
        },
      );
      return undefined;
    });
    const stub: Delivery = {
      channel: delivery.channel,
      chatId: delivery.chatId,
      kind: delivery.kind,
      text: "",
      ...(delivery.jid ? { jid: delivery.jid } : {}),
    };
    return { stub, spilled };
  }

  /** `name`: what `put` resolved to; `stub`: what stood for the delivery (named in the log). */
  async take(name: string | undefined, stub: Delivery): Promise<Delivery | undefined> {
    if (--this.count < 0) this.count = 0;
    if (name === undefined) return undefined;
    try {
      return await this.store.take(name);
    } catch (error) {
      this.logger.error("a waiting reply could not be read back from disk: the next start sends it", {
        channel: stub.channel,
        chatId: stub.chatId,
        error: describeError(error),
      });
      return undefined;
    }
  }

  async discard(spilled: Promise<string | undefined> | undefined): Promise<void> {
    const name = await spilled;
    if (name !== undefined) await this.store.discard(name);
  }
}
