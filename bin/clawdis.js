#!/usr/bin/env node
// The clawdis command. Runs the compiled code in dist/ (built by `npm install` through the prepare script).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/src/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    "clawdis is not built yet: run `npm install` (or `npm run build`) in the clawdis folder.\n",
  );
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
