import { readdir, readFile, rm, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import {
  type AuthenticationCreds,
  type AuthenticationState,
  BufferJSON,
  initAuthCreds,
  proto,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from "@whiskeysockets/baileys";
import { writePrivateFile } from "../../src/plugin-api/index.js";

/**
 * The WhatsApp link's credentials on disk: `<state>/credentials/whatsapp/` (0700), `creds.json` (0600) and one
 * file per signal key under `keys/<type>/` (0600). Contract:
 * - every file is written atomically (`writePrivateFile`: temp file, fsync, rename): a crash mid-save leaves the
 *   old content or the whole new one, never a truncated `creds.json`;
 * - writes of one file are serialized in call order; overlapping `saveCreds` calls coalesce: a save asked for while
 *   one is being written waits for it and then writes the newest credentials once;
 * - each key type holds at most `KEY_LIMITS[type]` keys: past that the least recently written key is deleted (a
 *   stale session costs one retry receipt; the pile never grows without bound);
 * - temp files a crash left behind are ignored when reading and removed on open.
 */

export const CREDENTIALS_FILE = "creds.json";

/** At most this many keys of each type are kept (pre-keys: WhatsApp asks for 812 at first upload). */
export const KEY_LIMITS: Readonly<Record<keyof SignalDataTypeMap, number>> = {
  "pre-key": 2_000,
  session: 1_000,
  "sender-key": 1_000,
  "sender-key-memory": 1_000,
  "app-state-sync-key": 200,
  "app-state-sync-version": 50,
  "lid-mapping": 10_000,
  "device-list": 1_000,
  tctoken: 1_000,
  "identity-key": 1_000,
};

/** The credentials folder of a state directory. */
export function credentialsDir(stateDir: string): string {
  return join(stateDir, "credentials", "whatsapp");
}

export interface WhatsappAuth {
  state: AuthenticationState;
  /** Writes the current `state.creds` (serialized and coalesced; see the module comment). */
  saveCreds(): Promise<void>;
  /** Resolves when every write asked for so far is on disk. */
  flush(): Promise<void>;
  /** Epoch ms of the last credentials write (this run's, else the file's mtime); undefined: never saved. */
  savedAt(): number | undefined;
}

/** A linked account as the credentials say: its own JID (and LID), and when they were last written. */
export interface LinkedAccount {
  id: string;
  lid?: string;
  name?: string;
  savedAt: number;
}

const isTemp = (name: string) => name.startsWith(".") && name.includes(".tmp-");

/** Reads the linked account from `dir`; undefined when there are no usable credentials (never linked, logged out). */
export async function readLinkedAccount(dir: string): Promise<LinkedAccount | undefined> {
  const path = join(dir, CREDENTIALS_FILE);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const creds = parseCreds(text, path);
  if (!creds.me?.id) return undefined;
  const { mtimeMs } = await stat(path);
  return {
    id: creds.me.id,
    ...(creds.me.lid ? { lid: creds.me.lid } : {}),
    ...(creds.me.name ? { name: creds.me.name } : {}),
    savedAt: Math.round(mtimeMs),
  };
}

function parseCreds(text: string, path: string): AuthenticationCreds {
  try {
    return JSON.parse(text, BufferJSON.reviver) as AuthenticationCreds;
  } catch (error) {
    throw new Error(
      `${path} is not valid JSON (${(error as Error).message}); run \`clawdis logout\`, then \`clawdis login\``,
    );
  }
}

/** Removes the credentials folder (logout). Sessions and transcripts are elsewhere and stay. */
export async function removeAuthState(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/**
 * Opens (or starts) the credentials in `dir`. A missing `creds.json` gives fresh, unlinked credentials (what
 * `clawdis login` starts from); a corrupt one is an error naming the file and the fix, never silently replaced.
 */
export async function openAuthState(
  dir: string,
  options: { now?: () => number; limits?: Partial<Record<keyof SignalDataTypeMap, number>> } = {},
): Promise<WhatsappAuth> {
  const now = options.now ?? Date.now;
  const limits = { ...KEY_LIMITS, ...options.limits };
  const credsPath = join(dir, CREDENTIALS_FILE);
  let creds: AuthenticationCreds;
  let savedAt: number | undefined;
  try {
    creds = parseCreds(await readFile(credsPath, "utf8"), credsPath);
    savedAt = Math.round((await stat(credsPath)).mtimeMs);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    creds = initAuthCreds();
  }
  await removeTemps(dir);

  const chains = new Map<string, Promise<void>>();
  /** Runs `write` after every earlier write of `path`; a failed write does not block the next one. */
  const serialize = (path: string, write: () => Promise<void>): Promise<void> => {
    const next = (chains.get(path) ?? Promise.resolve()).catch(() => {}).then(write);
    chains.set(path, next);
    void next.then(
      () => chains.get(path) === next && chains.delete(path),
      () => chains.get(path) === next && chains.delete(path),
    );
    return next;
  };

  const keys = new KeyFiles(join(dir, "keys"), limits, serialize);
  await keys.load();

  let queued: Promise<void> | undefined;
  const saveCreds = (): Promise<void> => {
    if (queued) return queued;
    const save = serialize(credsPath, async () => {
      queued = undefined;
      await writePrivateFile(credsPath, JSON.stringify(creds, BufferJSON.replacer));
      savedAt = now();
    });
    queued = save;
    return save;
  };

  return {
    state: { creds, keys: keys.store() },
    saveCreds,
    flush: async () => {
      while (chains.size > 0) await Promise.allSettled([...chains.values()]);
    },
    savedAt: () => savedAt,
  };
}

async function removeTemps(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  await Promise.all(
    entries
      .filter((entry) => entry.isFile() && isTemp(entry.name))
      .map((entry) => unlink(join(entry.parentPath, entry.name)).catch(() => {})),
  );
}

type KeyType = keyof SignalDataTypeMap;

/** Signal keys, one file each, bounded per type (least recently written first out). */
class KeyFiles {
  /** Per type: the ids on disk, least recently written first. */
  private readonly index = new Map<KeyType, Set<string>>();
  private readonly cache = new Map<string, unknown>();

  constructor(
    private readonly root: string,
    private readonly limits: Record<KeyType, number>,
    private readonly serialize: (path: string, write: () => Promise<void>) => Promise<void>,
  ) {}

  async load(): Promise<void> {
    const types = await readdir(this.root).catch(() => [] as string[]);
    for (const type of types) {
      if (!(type in this.limits)) continue;
      const names = (await readdir(join(this.root, type)).catch(() => [] as string[])).filter(
        (name) => name.endsWith(".json") && !isTemp(name),
      );
      const dated = await Promise.all(
        names.map(async (name) => ({
          id: decodeURIComponent(name.slice(0, -".json".length)),
          at: (await stat(join(this.root, type, name)).catch(() => ({ mtimeMs: 0 }))).mtimeMs,
        })),
      );
      dated.sort((a, b) => a.at - b.at || a.id.localeCompare(b.id));
      this.index.set(type as KeyType, new Set(dated.map((d) => d.id)));
    }
  }

  private path(type: KeyType, id: string): string {
    return join(this.root, type, `${encodeURIComponent(id)}.json`);
  }

  private ids(type: KeyType): Set<string> {
    let ids = this.index.get(type);
    if (!ids) {
      ids = new Set();
      this.index.set(type, ids);
    }
    return ids;
  }

  private async read(type: KeyType, id: string): Promise<unknown> {
    const cacheKey = `${type}/${id}`;
    if (this.cache.has(cacheKey)) return this.cache.get(cacheKey);
    if (!this.ids(type).has(id)) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(await readFile(this.path(type, id), "utf8"), BufferJSON.reviver);
    } catch {
      return undefined; // a key file that cannot be read counts as missing: WhatsApp re-sends (retry receipt)
    }
    if (type === "app-state-sync-key" && value) {
      value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
    }
    this.cache.set(cacheKey, value);
    return value;
  }

  private write(type: KeyType, id: string, value: unknown): Promise<void> {
    const ids = this.ids(type);
    ids.delete(id);
    const cacheKey = `${type}/${id}`;
    const path = this.path(type, id);
    if (value === null || value === undefined) {
      this.cache.delete(cacheKey);
      return this.serialize(path, () => unlink(path).catch(() => {}));
    }
    ids.add(id);
    this.cache.set(cacheKey, value);
    const text = JSON.stringify(value, BufferJSON.replacer);
    const writes = [this.serialize(path, () => writePrivateFile(path, text))];
    const limit = this.limits[type];
    for (const oldest of ids) {
      if (ids.size <= limit) break;
      ids.delete(oldest);
      this.cache.delete(`${type}/${oldest}`);
      const oldPath = this.path(type, oldest);
      writes.push(this.serialize(oldPath, () => unlink(oldPath).catch(() => {})));
    }
    return Promise.all(writes).then(() => {});
  }

  store(): SignalKeyStore {
    return {
      get: async <T extends KeyType>(type: T, ids: string[]) => {
        const out: { [id: string]: SignalDataTypeMap[T] } = {};
        await Promise.all(
          ids.map(async (id) => {
            const value = await this.read(type, id);
            if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
          }),
        );
        return out;
      },
      set: async (data: SignalDataSet) => {
        const writes: Promise<void>[] = [];
        for (const [type, values] of Object.entries(data) as [KeyType, Record<string, unknown>][]) {
          for (const [id, value] of Object.entries(values ?? {})) writes.push(this.write(type, id, value));
        }
        await Promise.all(writes);
      },
    };
  }
}
