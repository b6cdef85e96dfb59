import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

/**
 * `npm run test:quick`, for the edit loop: every unit and in-process test, and the end-to-end files that take a
 * few seconds each. Left out (run by `npm test`, which CI runs): the fault-injection suite, the journal file of
 * 556 MB, and the end-to-end files built on process restarts, signals, second processes, long waits or a
 * browser (each over about 3 s). The list is of what is left out, so a new test file is in the quick run unless it
 * is named here.
 */
export const SLOW_FILES = [
  "test/fault/**",
  "src/sessions/journal-past-string-limit.test.ts",
  "test/e2e/agent-stream.test.ts",
  "test/e2e/approvals.test.ts",
  "test/e2e/attach-passivate.test.ts",
  "test/e2e/automation-interrupt.test.ts",
  "test/e2e/config-reload.test.ts",
  "test/e2e/delivery.test.ts",
  "test/e2e/doctor-gateway.test.ts",
  "test/e2e/drain-resume.test.ts",
  "test/e2e/drain.test.ts",
  "test/e2e/first-run.test.ts",
  "test/e2e/gateway-port.test.ts",
  "test/e2e/gateway-stop.test.ts",
  "test/e2e/in-process-restart.test.ts",
  "test/e2e/openai-api.test.ts",
  "test/e2e/reminders.test.ts",
  "test/e2e/restart.test.ts",
  "test/e2e/session-upkeep.test.ts",
  "test/e2e/signals.test.ts",
  "test/e2e/state-dir.test.ts",
  "test/e2e/subagents.test.ts",
  "test/e2e/telegram-restarts.test.ts",
  "test/e2e/telegram.test.ts",
  "test/e2e/webchat-approvals.test.ts",
  "test/e2e/webchat-browser.test.ts",
  "test/e2e/whatsapp.test.ts",
];

export default mergeConfig(base, defineConfig({ test: { exclude: SLOW_FILES } }));
