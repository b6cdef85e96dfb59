import { spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BufferJSON } from "@whiskeysockets/baileys";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CREDENTIALS_FILE,
  credentialsDir,
  openAuthState,
  readLinkedAccount,
  removeAuthState,
} from "./auth-state.js";

let stateDir: string;
let dir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), "clawdis-wa-auth-"));
  dir = credentialsDir(stateDir);
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

const readCreds = async () =>
  JSON.parse(await readFile(join(dir, CREDENTIALS_FILE), "utf8"), BufferJSON.reviver) as {
    me?: { id: string; name?: string };
    registrationId: number;
  };

describe("the WhatsApp credentials", () => {
  it("live in <state>/credentials/whatsapp/, private to the user (0700 folders, 0600 files)", async () => {
    const auth = await openAuthState(dir);
    auth.state.creds.me = { id: "15550001111:7@s.whatsapp.net" };
    await auth.saveCreds();
    await auth.state.keys.set({ session: { "4915112345678.0": new Uint8Array([1, 2, 3]) } });
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, "keys", "session"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, CREDENTIALS_FILE))).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "keys", "session", "4915112345678.0.json"))).mode & 0o777).toBe(0o600);
  });

  it("come back as they were saved, keys and all, and say who is linked", async () => {
    const auth = await openAuthState(dir, { now: () => 1_234 });
    expect(await readLinkedAccount(dir)).toBeUndefined();
    auth.state.creds.me = { id: "15550001111:7@s.whatsapp.net", lid: "900:7@lid", name: "Clawd" };
    await auth.saveCreds();
    expect(auth.savedAt()).toBe(1_234);
    await auth.state.keys.set({
      "pre-key": { "5": { public: new Uint8Array([5]), private: new Uint8Array([6]) } },
    });
    const again = await openAuthState(dir);
    expect(again.state.creds.registrationId).toBe(auth.state.creds.registrationId);
    expect(Buffer.from(again.state.creds.noiseKey.private)).toEqual(
      Buffer.from(auth.state.creds.noiseKey.private),
    );
    const keys = await again.state.keys.get("pre-key", ["5", "6"]);
    expect(Buffer.from(keys["5"]?.private ?? [])).toEqual(Buffer.from([6]));
    expect(keys["6"]).toBeUndefined();
    expect(await readLinkedAccount(dir)).toMatchObject({
      id: "15550001111:7@s.whatsapp.net",
      lid: "900:7@lid",
    });
  });

  it("serialize overlapping saves: 50 at once end with the newest credentials, written at most twice", async () => {
    const auth = await openAuthState(dir);
    const saves: Promise<void>[] = [];
    for (let n = 1; n <= 50; n++) {
      auth.state.creds.me = { id: "15550001111:7@s.whatsapp.net", name: `name ${n}` };
      saves.push(auth.saveCreds());
    }
    let writes = 0;
    const started = Date.now();
    await Promise.all(saves);
    writes = new Set(saves).size;
    expect(writes).toBeLessThanOrEqual(2);
    expect((await readCreds()).me?.name).toBe("name 50");
    // A save asked for after the others were written writes again.
    auth.state.creds.me = { id: "15550001111:7@s.whatsapp.net", name: "later" };
    await auth.saveCreds();
    expect((await readCreds()).me?.name).toBe("later");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("write overlapping key updates in call order: the last one wins", async () => {
    const auth = await openAuthState(dir);
    await Promise.all(
      Array.from({ length: 30 }, (_, n) => auth.state.keys.set({ session: { "a.0": new Uint8Array([n]) } })),
    );
    const fresh = await openAuthState(dir);
    expect(Buffer.from((await fresh.state.keys.get("session", ["a.0"]))["a.0"] ?? [])).toEqual(
      Buffer.from([29]),
    );
  });

  it("keep at most the limit of keys per type, dropping the least recently written", async () => {
    const auth = await openAuthState(dir, { limits: { session: 3 } });
    for (const id of ["a.0", "b.0", "c.0", "d.0"]) {
      await auth.state.keys.set({ session: { [id]: new Uint8Array([1]) } });
    }
    await auth.state.keys.set({ session: { "b.0": new Uint8Array([2]) } });
    await auth.state.keys.set({ session: { "e.0": new Uint8Array([3]) } });
    await auth.flush();
    expect((await readdir(join(dir, "keys", "session"))).sort()).toEqual([
      "b.0.json",
      "d.0.json",
      "e.0.json",
    ]);
    const reopened = await openAuthState(dir, { limits: { session: 3 } });
    expect(
      Object.keys(await reopened.state.keys.get("session", ["a.0", "b.0", "c.0", "d.0", "e.0"])).sort(),
    ).toEqual(["b.0", "d.0", "e.0"]);
  });

  it("delete a key set to null", async () => {
    const auth = await openAuthState(dir);
    await auth.state.keys.set({
      "pre-key": { "9": { public: new Uint8Array([1]), private: new Uint8Array([2]) } },
    });
    await auth.state.keys.set({ "pre-key": { "9": null } });
    expect(await readdir(join(dir, "keys", "pre-key"))).toEqual([]);
  });

  it("survive a crash mid-save: creds.json is whole (old or new), and the leftover temp files are removed", async () => {
    const worker = spawn(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "../../test/fakes/whatsapp-creds-worker.ts"), dir],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    worker.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await new Promise<void>((resolve, reject) => {
      worker.stdout.on("data", (chunk: Buffer) => {
        if (/saved [5-9]\d*\n|saved \d{2,}\n/.test(chunk.toString())) resolve();
      });
      worker.on("exit", () => reject(new Error(`the worker ended early: ${stderr}`)));
    });
    worker.kill("SIGKILL");
    await new Promise((resolve) => worker.once("exit", resolve));
    const creds = await readCreds();
    expect(creds.me?.name).toMatch(/^save \d+ x+$/);
    const auth = await openAuthState(dir);
    expect(auth.state.creds.me?.name).toBe(creds.me?.name);
    const leftovers = (await readdir(dir, { recursive: true })).filter((name) => name.includes(".tmp-"));
    expect(leftovers).toEqual([]);
    expect((await auth.state.keys.get("session", ["4915112345678.0"]))["4915112345678.0"]?.length).toBe(
      64 * 1024,
    );
  });

  it("refuse a corrupt creds.json with the file and the fix, and never overwrite it", async () => {
    await openAuthState(dir).then((auth) => auth.saveCreds());
    await writeFile(join(dir, CREDENTIALS_FILE), '{"noiseKey": ');
    await expect(openAuthState(dir)).rejects.toThrow(/creds\.json is not valid JSON.*clawdis logout/);
    expect(await readFile(join(dir, CREDENTIALS_FILE), "utf8")).toBe('{"noiseKey": ');
  });

  it("are removed whole by logout", async () => {
    const auth = await openAuthState(dir);
    auth.state.creds.me = { id: "15550001111:7@s.whatsapp.net" };
    await auth.saveCreds();
    await removeAuthState(dir);
    expect(await readLinkedAccount(dir)).toBeUndefined();
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  });
});
