// Just over 400 lines: `clawdis doctor` runs its checks in one order and one report; each check's deciding lives in
// the doctor-*.ts files it imports.
import { access, readdir, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { type ClawdisConfig, defaultConfig, loadConfig } from "../core/config.js";
import type { ConfigSectionsSource } from "../core/config-sections.js";
import { describeError } from "../core/errors.js";
import { createLogger, type Logger } from "../core/logger.js";
import {
  configPath,
  defaultStorePath,
  defaultWorkspaceDir,
  legacyStorePath,
  stateDir,
} from "../core/paths.js";
import { unsetApprovalsWarning } from "../runtime/approvals/approval-policy.js";
import { sessionRootsOf } from "../runtime/session/session-workspace.js";
import { isValidSessionId, quoteId, whyInvalid } from "../sessions/session-id.js";
import { sessionIdOfTranscript, transcriptPathFor } from "../sessions/session-paths.js";
import { SessionStore } from "../sessions/store.js";
import { withFileLock } from "../sessions/store-lock.js";
import { serializeStore, storeParseReason } from "../sessions/store-parse.js";
import { readStoreFile } from "../sessions/store-read.js";
import { writeFileAtomic } from "../sessions/store-write.js";
import { readTranscript, type TranscriptRead } from "../sessions/transcript.js";
import { copyAside, repairTranscript } from "../sessions/transcript-repair.js";
import { checkGatewayConfig } from "./doctor-gateway-config.js";
import { checkJournal } from "./doctor-journal.js";
import { checkModel } from "./doctor-model.js";
import { checkModes } from "./doctor-modes.js";
import { DoctorFindings, doctorJson, summarize, summaryLine } from "./doctor-report.js";
import { checkUpkeep } from "./doctor-upkeep.js";
import { probeGateway } from "./gateway-client.js";
import type { CliIO } from "./io.js";
import { count } from "./plural.js";

/**
 * `clawdis doctor [--fix] [--json]`: checks the config, the running gateway (its config, transports and model;
 * without one, the model endpoint itself), the session store, the transcripts, the journal and the file modes,
 * one line per finding ("✓" fine, "-" worth knowing, "✗" a problem, "✓ fixed:" repaired), then one summary line.
 * Exit 0 when nothing is wrong or everything found was fixed, 1 when a problem remains (a bad config included:
 * reporting it is doctor's job, so not 2). After `--fix` repaired something, the whole check runs once
 * more, silently: what it finds is what remains, so "all fixed" and exit 0 are never said while something is left.
 * `--json` prints one object instead (see DoctorJson), nothing else on stdout.
 *
 * Nothing is changed without `--fix`. With it, every change keeps a backup next to the file it touches, store
 * writes take the store's lock, and the sessions are left alone while the config is invalid (the store path is
 * then not known for sure). Best run with the gateway stopped: a transcript the gateway appends to while it is
 * being repaired is left as it is.
 */

type RawStore = Record<string, Record<string, unknown>>;

interface TranscriptInfo {
  name: string;
  id: string;
  path: string;
  size: number;
  mtimeMs: number;
  read: TranscriptRead;
}

type Report = DoctorFindings;

/** `sections`: the built-in plugins' config sections; plugins of `plugins.load` are not loaded (see notes). */
export async function runDoctor(
  opts: { fix?: boolean; json?: boolean },
  io: CliIO,
  sections?: ConfigSectionsSource,
): Promise<number> {
  const fixRan = opts.fix === true;
  const report = new DoctorFindings(opts.json ? undefined : io.stdout);
  await checkEverything(fixRan, io, report, sections);
  let remaining = report.problems;
  if (fixRan && report.findings.some((f) => f.level === "fixed")) {
    const recheck = new DoctorFindings();
    await checkEverything(false, io, recheck, sections);
    remaining = recheck.problems;
  }
  const summary = summarize(report.problems, remaining);
  if (opts.json) io.stdout(`${JSON.stringify(doctorJson(report.findings, summary, fixRan), null, 2)}\n`);
  else io.stdout(`${summaryLine(summary, fixRan)}\n`);
  return summary.exitCode;
}

/** One pass over everything doctor checks, reporting into `report`; with `fixRequested`, repairing too. */
async function checkEverything(
  fixRequested: boolean,
  io: CliIO,
  report: Report,
  sections: ConfigSectionsSource | undefined,
): Promise<void> {
  const opts = { fix: fixRequested };
  let storePath: string;
  let configFile = configPath(io.env);
  let workspaceDir = defaultWorkspaceDir(io.env);
  let configOk = true;
  let config: ClawdisConfig = defaultConfig();
  try {
    const loaded = loadConfig(io.env, sections ? await sections(io.env) : undefined);
    config = loaded.config;
    storePath = loaded.storePath;
    configFile = loaded.path;
    workspaceDir = loaded.workspaceDir;
    report.ok(
      loaded.exists ? `config ${loaded.path} is valid` : `no config at ${loaded.path}: every default applies`,
    );
    for (const warning of loaded.warnings) report.note(warning);
    const unasked = unsetApprovalsWarning(config.inbound.reply.agent.approvals);
    if (unasked) report.note(unasked);
    for (const { key, closest } of loaded.unchecked) {
      const typo = closest === undefined ? "" : ` (did you mean "${closest}"?)`;
      report.note(
        `config key "${key}" not checked${typo}: no built-in plugin owns it, so it may be the section of a plugin in plugins.load, which \`clawdis gateway\` checks when it starts`,
      );
    }
  } catch (error) {
    configOk = false;
    storePath = defaultStorePath(io.env);
    report.problem(`config: ${describeError(error).replace(/\n/g, "\n    ")}`);
    report.note(
      `checking the default store ${storePath}${opts.fix ? "; sessions are not repaired until the config is valid" : ""}`,
    );
  }
  // The running gateway's view (its address comes from the state directory when the config does not load): its
  // config, transports and model. Without one, the model as this config and environment give it, asked at the
  // endpoint: a gateway started now would run without a model, or with one it cannot reach.
  const gateway = await probeGateway(config, io.env);
  await checkGatewayConfig(gateway, configFile, report);
  await checkModel(configOk ? config.inbound.reply.agent : undefined, io.env, configFile, gateway, report);
  const fix = opts.fix === true && configOk;
  const logLines: string[] = [];
  const logger = createLogger({ level: "warn", sink: (line) => logLines.push(line.message) });
  const store = new SessionStore({ path: storePath, logger });
  const raw = await checkStore(storePath, store, fix, report, logLines, io);
  // Where sessions' files are, as the gateway finds them (session-paths.ts).
  const roots = sessionRootsOf(config, dirname(storePath), workspaceDir);
  const transcripts = await scanTranscripts(roots.storeDir, report);
  if (raw !== undefined) await checkEntries(raw, storePath, transcripts, store, logger, fix, report);
  else if (transcripts.length > 0) report.note("transcript ownership not checked: the store does not parse");
  await checkTranscriptLines(raw, transcripts, fix, report);
  if (configOk && raw !== undefined) await checkUpkeep(config, store, roots.primaryKey, report);
  await checkJournal(io.env, report);
  // Modes are repaired even while the config is invalid: tightening a mode loses nothing.
  await checkModes({ stateDir: stateDir(io.env), configFile, sessions: roots }, fixRequested, report);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The store as parsed, or undefined when it does not parse (and was not fixed). A missing store is `{}`. */
async function checkStore(
  storePath: string,
  store: SessionStore,
  fix: boolean,
  report: Report,
  logLines: string[],
  io: CliIO,
): Promise<RawStore | undefined> {
  const legacy = legacyStorePath(io.env);
  if (legacy !== storePath && (await exists(legacy)) && !(await exists(storePath))) {
    report.note(`legacy store ${legacy} is moved to ${storePath} when the gateway next starts`);
  }
  let read = await readStoreFile(storePath);
  if (!read.exists) {
    report.ok(`store ${storePath} does not exist yet (no sessions)`);
    return {};
  }
  if (!read.parsed.ok) {
    report.problem(`store ${storePath} does not parse: ${storeParseReason(read.text, read.parsed.reason)}`);
    if (!fix) return undefined;
    // The store itself sets a bad file aside (sessions.json.bad-<ts>) and rebuilds it from transcript headers.
    logLines.length = 0;
    await store.load();
    read = await readStoreFile(storePath);
    if (!read.exists || !read.parsed.ok) return undefined;
    report.repaired(logLines.join("; ") || `store ${storePath} rebuilt`);
  }
  const raw = read.parsed.raw as RawStore;
  report.ok(`store ${storePath} parses (${count(Object.keys(raw).length, "session")})`);
  return raw;
}

async function scanTranscripts(dir: string, report: Report): Promise<TranscriptInfo[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => sessionIdOfTranscript(n) !== undefined).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const found: TranscriptInfo[] = [];
  for (const name of names) {
    const id = sessionIdOfTranscript(name) ?? name;
    if (!isValidSessionId(id)) {
      report.note(
        `${join(dir, name)} is not a transcript name the gateway uses (${whyInvalid(id)}); ignored`,
      );
      continue;
    }
    const path = transcriptPathFor(dir, id);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile()) continue;
    found.push({ name, id, path, size: info.size, mtimeMs: info.mtimeMs, read: await readTranscript(path) });
  }
  return found;
}

/** Entries (ids, transcripts, shared ids) and transcript ownership (owned, archived, orphan). */
async function checkEntries(
  raw: RawStore,
  storePath: string,
  transcripts: TranscriptInfo[],
  store: SessionStore,
  logger: Logger,
  fix: boolean,
  report: Report,
): Promise<void> {
  const byId = new Map(transcripts.map((t) => [t.id, t]));
  const keysOfId = new Map<string, string[]>();
  const removeInvalid: { key: string; sessionId: unknown }[] = [];
  const removeMissing: { key: string; sessionId: string }[] = [];
  const stamp: string[] = [];

  for (const [key, entry] of Object.entries(raw)) {
    const why = whyInvalid(entry.sessionId);
    if (why !== undefined) {
      report.problem(
        `entry ${quoteId(key)}: sessionId ${quoteId(entry.sessionId)} is refused (${why}); the gateway skips it`,
      );
      removeInvalid.push({ key, sessionId: entry.sessionId });
      continue;
    }
    const sessionId = entry.sessionId as string;
    keysOfId.set(sessionId, [...(keysOfId.get(sessionId) ?? []), key]);
    if (typeof entry.updatedAt !== "number" || !Number.isFinite(entry.updatedAt)) {
      report.problem(
        `entry ${quoteId(key)}: updatedAt ${JSON.stringify(entry.updatedAt) ?? "undefined"} is not a number`,
      );
      stamp.push(key);
    }
    const transcript = store.transcriptPath(sessionId);
    if (byId.has(sessionId) || (await exists(transcript))) continue;
    if (typeof entry.lastInteractionAt === "number") {
      report.problem(
        `entry ${quoteId(key)}: transcript ${basename(transcript)} is missing (the next message starts a new session)`,
      );
      removeMissing.push({ key, sessionId });
    } else {
      report.note(`entry ${quoteId(key)}: no transcript yet (no exchange yet)`);
    }
  }
  for (const [sessionId, keys] of keysOfId) {
    if (keys.length > 1) {
      report.problem(
        `keys ${keys.map(quoteId).join(", ")} share session id ${sessionId}: their messages mix in one transcript; delete all but one`,
      );
    }
  }

  // Ownership, decided on the store as it is now (before any removal, so a reset is never undone).
  let owned = 0;
  let archived = 0;
  const orphans = new Map<string, TranscriptInfo[]>();
  for (const t of transcripts) {
    if (keysOfId.has(t.id)) owned += 1;
    else if (t.read.header === undefined) {
      if (t.size > 0)
        report.problem(
          `transcript ${t.path} belongs to no entry and has no header, so its key is unknown; move it away or delete it`,
        );
    } else if (raw[t.read.header.sessionKey] !== undefined) archived += 1;
    else {
      const key = t.read.header.sessionKey;
      orphans.set(key, [...(orphans.get(key) ?? []), t]);
    }
  }
  if (transcripts.length > 0) {
    report.ok(
      `${owned === 1 ? "1 transcript belongs to its entry" : `${owned} transcripts belong to their entries`}; ${archived} archived (earlier sessions after /new or idle expiry)`,
    );
  }
  for (const [key, list] of orphans) {
    report.problem(
      `key ${quoteId(key)} has no entry but ${count(list.length, "transcript")}: ${list.map((t) => t.name).join(", ")} (if you deleted the key to reset it, this is expected; --fix brings the newest back)`,
    );
  }
  if (!fix) return;
  if (removeInvalid.length + removeMissing.length + stamp.length + orphans.size === 0) return;

  if (await exists(storePath))
    report.note(`store backed up to ${await copyAside(storePath, "bak", new Date())}`);
  if (removeInvalid.length > 0) {
    // SessionStore.update never hands out (so cannot delete) an entry with an unusable id: remove those under
    // the same lock, re-reading the file and deleting a key only if it still holds the id that was checked.
    await withFileLock(storePath, logger, async (lock) => {
      const fresh = await readStoreFile(storePath);
      if (!fresh.exists || !fresh.parsed.ok) return;
      const current = fresh.parsed.raw as RawStore;
      for (const { key, sessionId } of removeInvalid) {
        if (current[key] !== undefined && Object.is(current[key].sessionId, sessionId)) delete current[key];
      }
      await writeFileAtomic(storePath, serializeStore(current), () => lock.assertHeld());
    });
    report.repaired(
      `removed ${count(removeInvalid.length, "entry", "entries")} with refused ids (a reset of ${removeInvalid.length === 1 ? "that key" : "those keys"})`,
    );
  }
  for (const { key, sessionId } of removeMissing) {
    await store.update(key, (current) => (current?.sessionId === sessionId ? undefined : current));
    report.repaired(`removed entry ${quoteId(key)} whose transcript is missing (a reset)`);
  }
  const removed = new Set(removeMissing.map((r) => r.key));
  for (const key of stamp.filter((k) => !removed.has(k))) {
    // The store stamps a non-numeric updatedAt with the current time on write.
    await store.update(key, (current) => current);
    report.repaired(`entry ${quoteId(key)}: updatedAt set to now`);
  }
  for (const [key, list] of orphans) {
    const newest = [...list].sort((a, b) => b.mtimeMs - a.mtimeMs)[0]!;
    const createdAt = Date.parse(newest.read.header?.createdAt ?? "");
    const mtime = Math.round(newest.mtimeMs);
    await store.update(
      key,
      (current) =>
        current ?? {
          sessionId: newest.id,
          updatedAt: mtime,
          lastInteractionAt: mtime,
          ...(Number.isFinite(createdAt) ? { createdAt } : {}),
        },
    );
    report.repaired(
      list.length === 1
        ? `key ${quoteId(key)} points to ${newest.id} again (its only transcript)`
        : `key ${quoteId(key)} points to ${newest.id} again (the newest of its ${list.length} transcripts)`,
    );
  }
}

/** Malformed lines and bad headers; `--fix` rewrites such files, keeping a backup. */
async function checkTranscriptLines(
  raw: RawStore | undefined,
  transcripts: TranscriptInfo[],
  fix: boolean,
  report: Report,
): Promise<void> {
  const keyOfId = new Map<string, string>();
  for (const [key, entry] of Object.entries(raw ?? {})) {
    if (typeof entry.sessionId === "string" && !keyOfId.has(entry.sessionId))
      keyOfId.set(entry.sessionId, key);
  }
  let clean = 0;
  for (const t of transcripts) {
    const { header, headerProblem, badLines } = t.read;
    let problems = 0;
    if (t.size === 0) {
      report.note(`transcript ${t.path} is empty (the next append writes its header)`);
      continue;
    }
    if (header === undefined) {
      report.problem(
        `transcript ${t.path}: bad header: ${(headerProblem ?? "missing").replace(/^bad header: /, "")}`,
      );
      problems += 1;
    } else if (header.id !== t.id) {
      report.problem(`transcript ${t.path}: header names session ${quoteId(header.id)}, not ${t.id}`);
      problems += 1;
    }
    const bodyBad = badLines.filter((b) => b.line !== 1);
    if (bodyBad.length > 0) {
      const shown = bodyBad.slice(0, 20).map((b) => b.line);
      const more = bodyBad.length > shown.length ? `, … (${bodyBad.length} in all)` : "";
      report.problem(
        `transcript ${t.path}: ${count(bodyBad.length, "malformed line")}: ${shown.join(", ")}${more} (first: ${bodyBad[0]!.reason}); readers skip ${bodyBad.length === 1 ? "it" : "them"}`,
      );
      problems += 1;
    }
    if (problems === 0) {
      clean += 1;
      continue;
    }
    if (!fix) continue;
    const result = await repairTranscript(t.path, {
      sessionId: t.id,
      sessionKey: header?.sessionKey ?? keyOfId.get(t.id),
      now: new Date(),
    }).catch((error: unknown) => ({ repaired: false as const, reason: describeError(error) }));
    if (result.repaired) {
      const what = [
        result.removedLines > 0 ? `dropped ${count(result.removedLines, "bad line")}` : "",
        result.headerRebuilt ? "rebuilt the header" : "",
      ].filter((s) => s.length > 0);
      report.repaired(`transcript ${t.path}: ${what.join(", ")}; the original is kept as ${result.backup}`);
    } else {
      report.note(`transcript ${t.path} not repaired: ${result.reason}`);
    }
  }
  if (transcripts.length > 0)
    report.ok(`${clean} of ${transcripts.length} transcripts read without a bad line`);
}
