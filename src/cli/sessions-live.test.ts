import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { livePhases, phasesFrom } from "./sessions-live.js";

describe("phasesFrom", () => {
  const store = "/state/sessions/sessions.json";
  it.each<[string, unknown, Record<string, string> | undefined]>([
    [
      "the loaded sessions of this store, by key",
      {
        path: store,
        sessions: [
          { key: "main", phase: "processing" },
          { key: "group:1", phase: "ready" },
          { key: "cold" },
          { key: "odd", phase: "dreaming" },
        ],
      },
      { main: "processing", "group:1": "ready" },
    ],
    [
      "another store: none",
      { path: "/other/sessions.json", sessions: [{ key: "main", phase: "ready" }] },
      {},
    ],
    [
      "the same store spelled otherwise",
      { path: "/state/sessions/../sessions/sessions.json", sessions: [{ key: "main", phase: "ready" }] },
      { main: "ready" },
    ],
    ["no session list", { error: "nope" }, undefined],
    ["not an object", "hello", undefined],
  ])("%s", (_what, body, expected) => {
    const got = phasesFrom(body, store);
    expect(got === undefined ? undefined : Object.fromEntries(got.phases)).toEqual(expected);
  });
});

describe("livePhases", () => {
  let stateDir: string;
  let server: Server | undefined;
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), "clawdis-live-"));
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
    await rm(stateDir, { recursive: true, force: true });
  });

  /** A gateway stand-in at the address file's URL, answering `GET /api/sessions` with `status` and `body`. */
  async function fakeGateway(status: number, body: unknown): Promise<string[]> {
    const auth: string[] = [];
    server = createServer((req, res) => {
      auth.push(`${req.url} ${req.headers.authorization}`);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await writeFile(join(stateDir, "gateway.json"), JSON.stringify({ pid: process.pid, url, startedAt: 0 }));
    await writeFile(join(stateDir, "gateway.token"), "tok\n");
    return auth;
  }

  it("asks nothing when no gateway runs on the state directory", async () => {
    expect(
      await livePhases({ CLAWDIS_STATE_DIR: stateDir }, join(stateDir, "sessions.json")),
    ).toBeUndefined();
  });

  it("takes the phases from the running gateway's session list, with its token", async () => {
    const store = join(stateDir, "sessions", "sessions.json");
    const auth = await fakeGateway(200, { path: store, sessions: [{ key: "main", phase: "processing" }] });
    const live = await livePhases({ CLAWDIS_STATE_DIR: stateDir }, store);
    expect(live && "phases" in live ? Object.fromEntries(live.phases) : live).toEqual({ main: "processing" });
    expect(auth).toEqual(["/api/sessions Bearer tok"]);
  });

  it("a gateway that refuses is said, not taken for no gateway", async () => {
    await fakeGateway(401, { error: "unauthorized" });
    const live = await livePhases({ CLAWDIS_STATE_DIR: stateDir }, join(stateDir, "sessions.json"));
    expect(live).toEqual({ none: expect.stringContaining("it answered HTTP 401") });
  });
});
