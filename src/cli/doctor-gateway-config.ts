import { readFile } from "node:fs/promises";
import { configDigest } from "../core/config-digest.js";
import type { ClawdisConfig } from "../core/config-schema.js";
import { formatAge } from "../core/format.js";
import type { Env } from "../core/paths.js";
import { readConfigStatus } from "../runtime/config-state.js";
import type { DoctorReport } from "./doctor-journal.js";
import { probeGateway } from "./gateway-client.js";

/**
 * Doctor's look at the running gateway's config (asked over its API, `GET /api/status`): which file it loaded,
 * and whether it runs on that file as it is now (the digests of the text agree). Says nothing when no gateway
 * runs. An edit it refused or a deleted file is a note (the config check above reports what is wrong with the
 * file); a gateway that runs on another version of the file for no reason it gives is a problem.
 */
export async function checkGatewayConfig(
  config: ClawdisConfig,
  env: Env,
  configFile: string,
  report: DoctorReport,
): Promise<void> {
  const gateway = await probeGateway(config, env);
  if (!gateway.running || gateway.error !== undefined) return;
  const who =
    typeof gateway.pid === "number" ? `the running gateway (pid ${gateway.pid})` : "the running gateway";
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
