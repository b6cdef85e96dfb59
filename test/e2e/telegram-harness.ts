import { type FakeChat, FakeTelegram, type FakeUser } from "../fakes/telegram-server.js";
import { deepMerge, E2eState, type Json } from "./harness.js";

/**
 * The Telegram end-to-end setup: the harness's state dir and fake model, plus a fake Bot API server the real
 * `clawdis gateway` is pointed at (`telegram.apiRoot`), with two allowed users and a stranger.
 */
export const ALICE: FakeUser = { id: 111, first_name: "Alice", username: "alice" };
export const BOB: FakeUser = { id: 222, first_name: "Bob", username: "bob_b" };
export const STRANGER: FakeUser = { id: 999, first_name: "Eve", username: "eve" };
export const privateChat = (user: FakeUser): FakeChat => ({ id: user.id, type: "private" });
export const GROUP: FakeChat = { id: -1001234, type: "supergroup", title: "The group" };

export interface TelegramE2e {
  state: E2eState;
  tg: FakeTelegram;
  /** The config with the `telegram` section merged over the harness's. */
  config(extra?: Json): Json;
}

export async function telegramE2e(section: Json = {}): Promise<TelegramE2e> {
  const tg = await FakeTelegram.start();
  const telegram = { botToken: tg.token, apiRoot: tg.url, allowFrom: [ALICE.id, "@bob_b"], ...section };
  const state = await E2eState.create({ config: { telegram } });
  const originalCleanup = state.cleanup.bind(state);
  state.cleanup = async () => {
    await originalCleanup();
    await tg.close();
  };
  return {
    state,
    tg,
    config: (extra: Json = {}) => state.configFor({ config: deepMerge({ telegram }, extra) }),
  };
}
