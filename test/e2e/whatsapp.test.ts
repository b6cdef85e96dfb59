import { stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeLinkedCredentials } from "../fakes/whatsapp-link.js";
import { type FakeWhatsappServer, startFakeWhatsappServer } from "../fakes/whatsapp-server.js";
import { cleanupAll, E2eState } from "./harness.js";

/**
 * The WhatsApp transport in the real `clawdis gateway`, its socket pointed at a loopback WebSocket server by
 * `whatsapp.socketUrl` (the documented option). No fake can complete WhatsApp's handshake (Baileys checks the
 * server's certificate), so this proves what a user sees around the link: it is attempted, reported honestly
 * (never "linked" while the socket is not open), healed after a drop, refused to a second client, and closed
 * at stop; the messages themselves are tested through Baileys' real receive path in plugins/whatsapp/.
 */

interface TransportStatus {
  id: string;
  state: string;
  detail?: string;
  lastError?: string;
}

const credentials = (dir: string) => join(dir, "credentials", "whatsapp", "creds.json");

describe("e2e: WhatsApp in clawdis gateway", () => {
  let server: FakeWhatsappServer;
  let state: E2eState;

  beforeAll(async () => {
    server = await startFakeWhatsappServer();
    state = await E2eState.create({
      config: {
        whatsapp: { enabled: true, socketUrl: server.url },
        inbound: { allowFrom: ["+4915112345678"] },
      },
    });
  });
  afterAll(async () => {
    await cleanupAll();
    await server.close();
  });

  it("without credentials: WhatsApp is down with 'run clawdis login', and the rest of the gateway runs", async () => {
    const gw = await state.startGateway();
    await gw.stderr.waitFor(/WhatsApp is not linked/);
    const status = await gw.call<{ transports: TransportStatus[] }>("GET", "/api/status");
    expect(status.body.transports).toContainEqual(
      expect.objectContaining({
        id: "whatsapp",
        state: "down",
        lastError: expect.stringMatching(/clawdis login/),
      }),
    );
    const reply = await gw.agent("still here?");
    expect(reply.body.payloads[0]?.text).toBe("echo: still here?");
    expect(server.connections).toBe(0);
    expect((await gw.stop()).code).toBe(0);
  });

  it("linked: connects to socketUrl, says 'connecting' (not linked) while the socket is not open, and heals a drop", async () => {
    await writeLinkedCredentials(state.dir, "15550001111", "900000000000001");
    const before = server.connections;
    const gw = await state.startGateway();
    await server.waitForConnections(before + 1);
    const status = await gw.call<{ transports: TransportStatus[] }>("GET", "/api/status");
    const whatsapp = status.body.transports.find((t) => t.id === "whatsapp");
    expect(whatsapp?.state).toBe("starting");
    expect(whatsapp?.detail).toMatch(/^connecting/);
    expect(whatsapp?.detail).not.toMatch(/linked/);

    const cli = await state.cli(["status", "--json"]);
    const report = JSON.parse(cli.stdout) as { gateway: { transports?: TransportStatus[] } };
    expect(report.gateway.transports).toContainEqual(
      expect.objectContaining({ id: "whatsapp", state: "starting" }),
    );

    // `clawdis login` while the gateway holds the link: said, and no second socket.
    const login = await state.cli(["login"]);
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/gateway \(pid \d+.*holds the WhatsApp link.*stop it first/);
    expect(server.connections).toBe(before + 1);

    // A dropped connection is reconnected (backoff about a second), with one socket at a time.
    server.dropAll();
    await server.waitForConnections(before + 2);
    expect(server.open).toBe(1);

    // Stop closes the socket.
    expect((await gw.stop()).code).toBe(0);
    await server.waitForNoneOpen();
  });

  it("clawdis logout removes the credentials once no gateway runs", async () => {
    const logout = await state.cli(["logout"], undefined, { timeoutMs: 20_000 });
    expect(logout.code, logout.stderr).toBe(0);
    expect(logout.stderr).toContain("Unlinked +15550001111");
    await expect(stat(credentials(state.dir))).rejects.toThrow(/ENOENT/);
  });
});
