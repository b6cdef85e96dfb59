import type { GatewayEvent } from "../plugin-api/types.js";

/** Fan-out of gateway events to observers. A listener that throws is removed, never breaks a turn. */
export class EventBus {
  private readonly listeners = new Set<(event: GatewayEvent) => void>();

  on(listener: (event: GatewayEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: GatewayEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        this.listeners.delete(listener);
      }
    }
  }
}
