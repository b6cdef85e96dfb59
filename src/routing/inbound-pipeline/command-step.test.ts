import { describe, expect, it } from "vitest";
import type { InboundMessage } from "../../plugin-api/types.js";
import type { WorkItem } from "../../runtime/work-item.js";
import type { SessionEntry } from "../../sessions/types.js";
import { type ChatCommand, parseChatCommand } from "../chat-command.js";
import {
  type CommandPlan,
  type CommandPorts,
  commandStep,
  modelListAnswer,
  planCommand,
  stopAnswer,
  withLevel,
  withModel,
} from "./command-step.js";
import type { InboundContext } from "./types.js";

const message = (fields: Partial<InboundMessage> = {}): InboundMessage => ({
  channel: "chat",
  chatId: "c1",
  chatType: "direct",
  senderId: "alice",
  messageId: "m1",
  text: "hello",
  receivedAt: 1,
  ...fields,
});
const itemOf = (m: InboundMessage): WorkItem => ({
  jid: "j",
  message: m,
  text: m.text,
  local: false,
  sessionKey: "main",
  resolve: () => {},
});

describe("planCommand", () => {
  it.each<[string, CommandPlan]>([
    ["hello", { kind: "pass" }],
    ["/status", { kind: "status" }],
    ["/stop", { kind: "stop", bare: false }],
    ["stop", { kind: "stop", bare: true }],
    ["/think", { kind: "show-directive", directive: "think" }],
    ["/verbose loud", { kind: "answer", text: "Usage: /verbose on|off" }],
    ["/model", { kind: "list-models" }],
    ["/model gpt-x", { kind: "set-model", model: "gpt-x" }],
    ["/model Default", { kind: "set-model", model: undefined }],
    ["/compact", { kind: "compact" }],
    [
      "/think high",
      {
        kind: "set-level",
        setting: { field: "thinkingLevel", level: "high" },
        confirm: "Thinking level set to high.",
        rest: "",
      },
    ],
    [
      "/verbose on and go",
      {
        kind: "set-level",
        setting: { field: "verboseLevel", level: "on" },
        confirm: "Verbose set to on.",
        rest: "and go",
      },
    ],
  ])("%s", (text, plan) => {
    expect(planCommand(parseChatCommand(text))).toEqual(plan);
  });
});

describe("withModel / modelListAnswer", () => {
  it("sets and removes the session's model, keeping the rest", () => {
    const entry: SessionEntry = { sessionId: "s", updatedAt: 1, thinkingLevel: "high", model: "last-used" };
    const set = withModel(entry, undefined, "m2", 9);
    expect(set).toEqual({ ...entry, modelOverride: "m2", updatedAt: 9 });
    expect(withModel(set, undefined, undefined, 10)).toEqual({ ...entry, updatedAt: 10 });
  });

  it("says when the list could not be had, and when nothing is set", () => {
    expect(modelListAnswer({ ok: false, error: "no answer within 10 s" }, "m")).toBe(
      "This session uses m. The endpoint's models could not be listed: no answer within 10 s",
    );
    expect(modelListAnswer({ ok: true, models: [] }, undefined)).toBe(
      "No model is set. The endpoint lists no models.",
    );
  });
});

describe("stopAnswer", () => {
  it.each<[boolean, boolean, string | undefined]>([
    [true, false, "Stopped."],
    [true, true, "Stopped."],
    [false, false, "Nothing to stop: no turn is running."],
    [false, true, undefined],
  ])("stopped %s, bare %s: %s", (stopped, bare, answer) => {
    expect(stopAnswer(stopped, bare)).toBe(answer);
  });
});

describe("withLevel", () => {
  const entry: SessionEntry = { sessionId: "s-1", updatedAt: 1, thinkingLevel: "low" };
  it("saves the level on the entry and marks it updated", () => {
    expect(withLevel(entry, undefined, { field: "verboseLevel", level: "on" }, 5)).toEqual({
      ...entry,
      verboseLevel: "on",
      updatedAt: 5,
    });
  });
  it("starts a session when there is none", () => {
    const fresh = withLevel(undefined, undefined, { field: "thinkingLevel", level: "high" }, 5);
    expect(fresh).toMatchObject({ thinkingLevel: "high", createdAt: 5, updatedAt: 5 });
    expect(fresh.sessionId).toMatch(/\S/);
  });
});

describe("commandStep", () => {
  const run = async (text: string, fields: Partial<InboundMessage> = {}, running = false) => {
    const answers: string[] = [];
    const statusFor: string[] = [];
    const aborted: string[] = [];
    const compacted: string[] = [];
    let stored: SessionEntry | undefined = { sessionId: "s-1", updatedAt: 1 };
    const ports: CommandPorts = {
      answer: async (_item, answer) => {
        answers.push(answer);
      },
      status: async (key, audience) => {
        statusFor.push(`${key} ${audience}`);
        return "status text";
      },
      abortTurn: (key) => {
        aborted.push(key);
        return running;
      },
      entry: async () => stored,
      updateEntry: async (_key, change) => {
        stored = change(stored);
      },
      now: () => 7,
      listModels: async () => ({ ok: true, models: ["fake-model", "big-model"] }),
      configuredModel: () => "fake-model",
      compact: (queued) => {
        compacted.push(queued.text);
      },
    };
    const item = itemOf(message({ text, ...fields }));
    const ctx: InboundContext = { message: item.message, local: false, item };
    let next = false;
    await commandStep(ports)(ctx, async () => {
      next = true;
    });
    return {
      answers,
      statusFor,
      aborted,
      compacted,
      stored,
      next,
      item,
      command: ctx.command as ChatCommand,
    };
  };

  it("/model <name> saves the session's model; /model lists the endpoint's, the one in use marked", async () => {
    const set = await run("/model big-model");
    expect(set.stored).toMatchObject({ sessionId: "s-1", modelOverride: "big-model", updatedAt: 7 });
    expect(set.answers).toEqual([
      "Model set to big-model for this session. /model default goes back to the configured one.",
    ]);
    expect(set.next).toBe(false);
    const list = await run("/model");
    expect(list.answers).toEqual([
      "This session uses fake-model. The endpoint offers: fake-model (in use), big-model. Change it with /model <name>.",
    ]);
  });

  it("/compact is queued for the session's lane, not answered here and not handed on as text", async () => {
    const out = await run("/compact");
    expect(out).toMatchObject({ answers: [], compacted: ["/compact"], next: false });
  });

  it("/status in a group is answered for the group's audience", async () => {
    const out = await run("/status", { chatType: "group" });
    expect(out).toMatchObject({ answers: ["status text"], statusFor: ["main group"], next: false });
  });

  it("/stop with a turn running aborts it and says so", async () => {
    const out = await run("/stop", {}, true);
    expect(out).toMatchObject({ answers: ["Stopped."], aborted: ["main"], next: false });
  });

  it("a bare stop with nothing running goes on to the queue as text", async () => {
    const out = await run("stop");
    expect(out).toMatchObject({ answers: [], aborted: ["main"], next: true });
    expect(out.item.text).toBe("stop");
  });

  it("/think with text saves the level and hands the text on", async () => {
    const out = await run("/think high what is 2+2");
    expect(out).toMatchObject({ answers: [], next: true, stored: { thinkingLevel: "high", updatedAt: 7 } });
    expect(out.item.text).toBe("what is 2+2");
  });

  it("/verbose alone saves and confirms; /verbose shows the setting", async () => {
    expect(await run("/verbose on")).toMatchObject({ answers: ["Verbose set to on."], next: false });
    expect((await run("/verbose")).answers).toEqual(["Verbose: off. Change it with /verbose on|off."]);
  });

  it("plain text is no command: parsed as none, nothing answered", async () => {
    const out = await run("hello");
    expect(out).toMatchObject({ answers: [], aborted: [], next: true });
    expect(out.command).toEqual({ kind: "none" });
  });
});
