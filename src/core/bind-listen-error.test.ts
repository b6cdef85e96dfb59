import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { bindListenError } from "./bind-listen-error.js";
import { ClawdisError } from "./errors.js";

/** An error shaped like the ones `net.Server#listen` emits. */
function listenError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}`), { code });
}

/** The error a real listen on `host` fails with. */
function realListenError(host: string): Promise<Error> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", resolve);
    server.listen(0, host, () => {
      server.close();
      reject(new Error(`listening on ${host} worked`));
    });
  });
}

describe("bindListenError", () => {
  it.each([
    ["ENOTFOUND", "nas.invalid", "no host name by that name resolves (ENOTFOUND)"],
    [
      "EAI_AGAIN",
      "nas.lan",
      'the host name "nas.lan" could not be resolved (the name server did not answer) (EAI_AGAIN)',
    ],
    [
      "EADDRNOTAVAIL",
      "192.0.2.1",
      'no network interface of this machine has the address "192.0.2.1" (EADDRNOTAVAIL)',
    ],
    ["EAFNOSUPPORT", "::1", 'this machine does not support the address family of "::1" (EAFNOSUPPORT)'],
  ])("%s is a config error naming gateway.bind and the value", (code, bind, problem) => {
    const cause = listenError(code);
    const error = bindListenError(cause, bind);
    expect(error).toBeInstanceOf(ClawdisError);
    expect(error?.code).toBe("CONFIG_INVALID");
    expect(error?.exitCode).toBe(2);
    expect(error?.message).toContain(`gateway.bind: cannot listen on ${JSON.stringify(bind)}: `);
    expect(error?.message).toContain(problem);
    expect(error?.cause).toBe(cause);
  });

  it.each(["EADDRINUSE", "EACCES", "EPERM", undefined])("%s is not the bind's fault: undefined", (code) => {
    const error = code === undefined ? new Error("boom") : listenError(code);
    expect(bindListenError(error, "127.0.0.1")).toBeUndefined();
    expect(bindListenError("a string", "127.0.0.1")).toBeUndefined();
  });

  it("finds the code on the cause chain, past a wrapper with its own code", () => {
    const wrapped = Object.assign(new Error("start failed", { cause: listenError("ENOTFOUND") }), {
      code: "IO",
    });
    expect(bindListenError(wrapped, "nas.invalid")?.code).toBe("CONFIG_INVALID");
  });

  it("heads the message with the config file when given, like other config errors", () => {
    const error = bindListenError(listenError("ENOTFOUND"), "nas.invalid", "/home/me/.clawdis/clawdis.json");
    expect(error?.message.split("\n")).toEqual([
      "invalid config /home/me/.clawdis/clawdis.json:",
      '  gateway.bind: cannot listen on "nas.invalid": "nas.invalid" is not an address of this machine and no host name by that name resolves (ENOTFOUND) — use an address of this machine, or "127.0.0.1" for this machine only',
    ]);
  });

  it("maps what a real listen on an address this machine does not have fails with", async () => {
    const error = bindListenError(await realListenError("192.0.2.1"), "192.0.2.1");
    expect(error?.message).toContain("(EADDRNOTAVAIL)");
  });

  it("maps a bracketed IPv6 address (no DNS involved) and says to drop the brackets", async () => {
    const error = bindListenError(await realListenError("[::1]"), "[::1]");
    expect(error?.code).toBe("CONFIG_INVALID");
    expect(error?.message).toContain('write an IPv6 address without brackets, e.g. "::1"');
  });
});
