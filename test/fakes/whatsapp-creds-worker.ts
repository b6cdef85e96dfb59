/**
 * Child process for the WhatsApp credentials crash test:
 * `node --import tsx whatsapp-creds-worker.ts <credentials dir>` saves the credentials (with a growing `me.name`,
 * padded so each write takes a while) and a signal key as fast as it can, forever, printing `saved <n>` after
 * each save. The test kills it with SIGKILL mid-save and checks what is left on disk.
 */
import { openAuthState } from "../../plugins/whatsapp/auth-state.js";

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write("usage: whatsapp-creds-worker <credentials dir>\n");
  process.exit(2);
}
const auth = await openAuthState(dir);
const padding = "x".repeat(256 * 1024);
for (let n = 1; ; n++) {
  auth.state.creds.me = { id: "15550001111:7@s.whatsapp.net", name: `save ${n} ${padding}` };
  await Promise.all([
    auth.saveCreds(),
    auth.state.keys.set({ session: { "4915112345678.0": new Uint8Array(64 * 1024).fill(n % 256) } }),
  ]);
  process.stdout.write(`saved ${n}\n`);
}
