/**
 * A preload (`node --import dist/bench/report-hwm.js …`) that writes the process's peak resident memory (VmHWM
 * from /proc/self/status, in KiB) to the file `$CLAWDIS_BENCH_HWM` at exit, so a bench can judge the memory of a
 * short-lived command without changing it. Linux only; elsewhere nothing is written.
 */
import { readFileSync, writeFileSync } from "node:fs";

const out = process.env.CLAWDIS_BENCH_HWM;
if (out) {
  process.on("exit", () => {
    const status = readFileSync("/proc/self/status", "utf8");
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    if (kib) writeFileSync(out, kib);
  });
}
