import { readFile } from "node:fs/promises";
import { configDigest } from "../core/config-digest.js";
import { formatAge } from "../core/format.js";
import { readConfigStatus } from "../runtime/config-state.js";
import { transportLine } from "../runtime/status-report.js";
import type { DoctorReport } from "./doctor-journal.js";
import type { GatewayState } from "./gateway-client.js";

/**
 * Doctor's look at the running gateway (what `GET /api/status` said): which config file it loaded, whether it
 * runs on that file as it is now (the digests of the text agree), then its transports. Says nothing when no
 * gateway runs. An edit it refused or a deleted file is a note (the config check above reports what is wrong with
 * the file); a gateway that runs on another version of the file for no reason it gives is a problem; a gateway
 * that started without a file runs on the defaults, which is fine. A transport that is down is a problem with its
 * cause and fix (as `/status` says it); one that is off is a note.
 */
export async function checkGatewayConfig(
  gateway: GatewayState,
  configFile: string,
  report: DoctorReport,
): Promise<void> {
  if (!gateway.running || gateway.error !== undefined) return;
  const who =
    typeof gateway.pid === "number" ? `the running gateway (pid ${gateway.pid})` : "the running gateway";
  await checkConfigFile(gateway, who, configFile, report);
  checkTransports(gateway, who, report);
}

function checkTransports(gateway: GatewayState & { running: true }, who: string, report: DoctorReport): void {
  const transports = Array.isArray(gateway.transports) ? gateway.transports : [];
  const off: string[] = [];
  for (const t of transports) {
    const view = {
      id: String(t.id),
      state: String(t.state),
      ...(typeof t.detail === "string" ? { detail: t.detail } : {}),
      ...(typeof t.lastError === "string" ? { lastError: t.lastError } : {}),
    };
    if (view.state === "disabled" || view.state === "stopped") off.push(view.id);
    else if (view.state === "ok") report.ok(`${who}: ${transportLine(view)}`);
    else if (view.state === "down") report.problem(`${who}: ${transportLine(view)}`);
    else report.note(`${who}: ${transportLine(view)}`);
  }
  if (off.length > 0) report.note(`${who}: off: ${off.join(", ")}`);
}

async function checkConfigFile(
  gateway: GatewayState & { running: true },
  who: string,
  configFile: string,
  report: DoctorReport,
): Promise<void> {
  const status = readConfigStatus(gateway.config);
  if (!status) {
    report.note(`${who} does not say which config it runs on (a version before config hot reload)`);
    return;
  }
  if (status.path !== configFile) {
    report.note(
      `${who} loaded ${status.path}, not ${configFile}: it was started with another CLAWDIS_CONFIG_PATH or state directory`,
    );
    return;
  }
  const text = await readFile(configFile, "utf8").catch(() => undefined);
  // Started without a file (the digest of "no text" is null) and none since: the defaults, as they should be.
  if (text === undefined && status.sha256 === null && !status.deleted) {
    report.ok(`${who} runs on every default: there is no config file at ${configFile}`);
    return;
  }
  if (status.deleted || text === undefined) {
    report.note(`${who} loaded ${configFile}, which is gone now: it runs on the last good config`);
    return;
  }
  if (status.sha256 === configDigest(text)) {
    report.ok(`${who} loaded ${configFile} and runs on it as it is now`);
    return;
  }
  if (status.rejected) {
    report.note(
      `${who} loaded ${configFile} but runs on an earlier version of it: its last edit was rejected ${formatAge(status.rejected.ageMs)} ago (${status.rejected.summary})`,
    );
    return;
  }
  report.problem(
    `${who} loaded ${configFile} but runs on another version of it: it applies a saved edit within a second or two; if this stays, restart the gateway`,
  );
}
