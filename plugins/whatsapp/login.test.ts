import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WASocket } from "@whiskeysockets/baileys";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  linkUp,
  offerPairing,
  recordSockets,
  type SocketRecorder,
  socketOpen,
  streamError,
  writeLinkedCredentials,
} from "../../test/fakes/whatsapp-link.js";
import { type FakeWhatsappServer, startFakeWhatsappServer } from "../../test/fakes/whatsapp-server.js";
import { CREDENTIALS_FILE, credentialsDir, readLinkedAccount } from "./auth-state.js";
import { createWhatsappLogin } from "./login.js";

/**
 * The login and logout flows on real Baileys sockets against the loopback server; WhatsApp's side of pairing
 * (the `pair-device` offer of QR refs, the 515 restart) is emitted on the socket as the server would send it.
 */

let server: FakeWhatsappServer;
let stateDir: string;
let recorder: SocketRecorder;
let printed: string;
const signal = new AbortController().signal;

beforeEach(async () => {
  server = await startFakeWhatsappServer();
  stateDir = await mkdtemp(join(tmpdir(), "clawdis-wa-login-"));
  recorder = recordSockets();
  printed = "";
});
afterEach(async () => {
  await server.close();
  await rm(stateDir, { recursive: true, force: true });
});

const options = (extra: { pairingNumber?: string } = {}) => ({
  stateDir,
  settings: { enabled: false, socketUrl: server.url, mediaMaxMb: 20, mediaTimeoutSeconds: 120 },
  print: (text: string) => {
    printed += text;
  },
  signal,
  ...extra,
});

async function nthSocket(n: number): Promise<WASocket> {
  const sock = (await recorder.sockets.waitFor(n))[n - 1] as WASocket;
  await socketOpen(sock);
  return sock;
}

/** What a successful scan leaves in the socket's credentials (Baileys' pair-success handler sets them). */
function paired(sock: WASocket): void {
  sock.authState.creds.me = { id: "15550001111:9@s.whatsapp.net", lid: "900000000000001:9@lid", name: "Me" };
  sock.ev.emit("creds.update", { me: sock.authState.creds.me });
}

describe("clawdis login (WhatsApp)", () => {
  it("shows the QR code, a new one as WhatsApp rotates it, and says clearly when it expired", async () => {
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket, qrTimeoutMs: 20 });
    const result = flows.login(options());
    offerPairing(await nthSocket(1), ["ref-one", "ref-two"]);
    expect(await result).toBe(1);
    expect(printed).toContain("Scan this QR code with WhatsApp");
    expect(printed).toContain("The QR code changed (WhatsApp rotates it); scan this one (2)");
    expect(printed.match(/▄|█/)).not.toBeNull();
    expect(printed).toContain("The QR code expired before it was scanned; run `clawdis login` again");
    // Nothing half-linked is left for the gateway.
    await expect(stat(credentialsDir(stateDir))).rejects.toThrow(/ENOENT/);
  });

  it("follows WhatsApp's restart after pairing (515) and ends linked, with the credentials on disk", async () => {
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket });
    const result = flows.login(options());
    const first = await nthSocket(1);
    offerPairing(first, ["ref-one"]);
    paired(first);
    streamError(first, 515);
    const second = await nthSocket(2);
    await linkUp(second);
    expect(await result).toBe(0);
    expect(printed).toContain("WhatsApp asks for a restart after pairing; reconnecting");
    expect(printed).toContain("Linked as +15550001111");
    expect(await readLinkedAccount(credentialsDir(stateDir))).toMatchObject({
      id: "15550001111:9@s.whatsapp.net",
    });
    expect((await stat(join(credentialsDir(stateDir), CREDENTIALS_FILE))).mode & 0o777).toBe(0o600);
    expect(server.open).toBe(0);
  });

  it("links by pairing code for a phone that cannot scan", async () => {
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket });
    const result = flows.login(options({ pairingNumber: "+15550001111" }));
    const sock = await nthSocket(1);
    offerPairing(sock, ["ref-one"]);
    expect(await recorder.pairing.waitFor(1)).toEqual(["15550001111"]);
    paired(sock);
    await linkUp(sock);
    expect(await result).toBe(0);
    expect(printed).toContain("Link with phone number instead, and enter\n\n    ABCD-1234");
    expect(printed).not.toContain("Scan this QR code");
  });

  it("refuses a pairing number that is not E.164 (exit 2), without a socket", async () => {
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket });
    expect(await flows.login(options({ pairingNumber: "0151 2345" }))).toBe(2);
    expect(printed).toContain("E.164");
    expect(recorder.sockets.items).toEqual([]);
  });

  it("leaves an account that is already linked alone", async () => {
    await writeLinkedCredentials(stateDir, "15550001111", "900000000000001");
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket });
    expect(await flows.login(options())).toBe(0);
    expect(printed).toContain("already linked as +15550001111");
    expect(printed).toContain("clawdis logout");
    expect(recorder.sockets.items).toEqual([]);
  });
});

describe("clawdis logout (WhatsApp)", () => {
  it("tells WhatsApp and removes the credentials", async () => {
    await writeLinkedCredentials(stateDir, "15550001111", "900000000000001");
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket });
    const result = flows.logout(options());
    await linkUp(await nthSocket(1));
    expect(await result).toBe(0);
    expect(recorder.logouts.items).toEqual([0]);
    expect(printed).toContain("Unlinked +15550001111");
    await expect(stat(credentialsDir(stateDir))).rejects.toThrow(/ENOENT/);
  });

  it("says so when there was nothing linked", async () => {
    const flows = createWhatsappLogin({ makeSocket: recorder.makeSocket });
    expect(await flows.logout(options())).toBe(0);
    expect(printed).toContain("WhatsApp was not linked");
    expect(recorder.sockets.items).toEqual([]);
  });
});
