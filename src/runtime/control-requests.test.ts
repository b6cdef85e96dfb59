import { describe, expect, it } from "vitest";
import { ControlRequests, type StopRequest } from "./control-requests.js";

describe("ControlRequests", () => {
  it("a stop request reaches every listener until it unsubscribes", () => {
    const control = new ControlRequests();
    const heard: StopRequest[] = [];
    const off = control.onStopRequest((request) => heard.push(request));
    control.requestStop({ why: "first" });
    off();
    control.requestStop({ why: "second" });
    expect(heard).toEqual([{ why: "first" }]);
  });

  it("a restart is refused while stopping (409) and without a handler (501); else the handler answers", async () => {
    const control = new ControlRequests();
    expect(await control.requestRestart("x", false)).toEqual({
      accepted: false,
      status: 501,
      error: "this gateway cannot restart in-process",
    });
    const asked: string[] = [];
    control.handleRestartRequests(async (why) => {
      asked.push(why);
      return { accepted: true };
    });
    expect(await control.requestRestart("x", true)).toEqual({
      accepted: false,
      status: 409,
      error: "the gateway is stopping",
    });
    expect(await control.requestRestart("config change", false)).toEqual({ accepted: true });
    expect(asked).toEqual(["config change"]);
  });
});
