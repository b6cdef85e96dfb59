/**
 * `npm run bench`: every benchmark of clawdis, each against a baseline measured in the same run, with the
 * target its issue set (bench-row.ts judges each row). Runs from dist/ (the script builds first). Pass section
 * names to run only some: `npm run bench -- store`.
 */
import { availableParallelism, loadavg } from "node:os";
import { type BenchRow, formatTable, machineLine } from "./bench-row.js";

type Section = { name: string; run: () => Promise<BenchRow[]> };

const sections: Section[] = [
  { name: "store", run: async () => (await import("./store-bench.js")).benchStore() },
  { name: "transcript", run: async () => (await import("./transcript-bench.js")).benchTranscript() },
  { name: "gateway", run: async () => (await import("./gateway-bench.js")).benchGateway() },
  { name: "startup", run: async () => (await import("./startup-bench.js")).benchStartup() },
  { name: "passivation", run: async () => (await import("./passivation-bench.js")).benchPassivation() },
  { name: "search", run: async () => (await import("./search-bench.js")).benchSearch() },
];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !sections.some((s) => s.name === name));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: no section ${unknown.join(", ")}; sections: ${sections.map((s) => s.name).join(", ")}\n`,
  );
  process.exit(2);
}
const rows: BenchRow[] = [];
const loadAtStart = loadavg();
for (const section of sections) {
  if (wanted.length > 0 && !wanted.includes(section.name)) continue;
  process.stderr.write(`bench: ${section.name}…\n`);
  rows.push(...(await section.run()));
}
process.stdout.write(`${formatTable(rows)}\n`);
process.stdout.write(
  `${machineLine(rows, { start: loadAtStart, end: loadavg(), cores: availableParallelism() })}\n`,
);
