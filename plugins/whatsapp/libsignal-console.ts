/**
 * libsignal (Baileys' Signal protocol library) prints its session bookkeeping straight to `console`, and some of
 * those lines dump the whole session object: ratchet private keys, root keys, chain keys ("Closing session:
 * SessionEntry {…}"). A gateway's log must never carry key material, and the lines are routine (every new
 * pre-key message closes the old session). While WhatsApp runs, the process's `console` drops exactly these
 * lines and hands their text, without the objects, to a sink (the plugin's debug log). Everything else written
 * to `console` passes through unchanged, libsignal's real errors (`console.error`) included.
 */

/** libsignal 6's routine lines, by their exact first argument (src/session_record.js, session_builder.js, session_cipher.js). */
const CHATTER = new Set([
  "Closing session:",
  "Opening session:",
  "Removing old closed session:",
  "Session already closed",
  "Session already open",
  "Migrating session to:",
  "Closing open session in favor of incoming prekey bundle",
  "Decrypted message with closed session.",
]);

/** The console methods libsignal prints its routine lines with. */
const METHODS = ["info", "warn", "log"] as const;

type ConsoleMethod = (typeof METHODS)[number];

/**
 * Pure. The text to log for one `console` call when it is libsignal's routine chatter (its label, without the
 * trailing colon and without the objects after it), else undefined: the call is someone else's and passes.
 */
export function libsignalChatter(args: readonly unknown[]): string | undefined {
  const first = args[0];
  if (typeof first !== "string" || !CHATTER.has(first)) return undefined;
  return first.replace(/[:.]$/, "");
}

/**
 * Wraps `target`'s info, warn and log so that libsignal's chatter goes to `sink` instead; returns the function
 * that puts the originals back.
 */
export function filterLibsignalConsole(
  target: Pick<Console, ConsoleMethod>,
  sink: (line: string) => void,
): () => void {
  const originals = METHODS.map((method) => [method, target[method]] as const);
  for (const [method, original] of originals) {
    target[method] = (...args: unknown[]) => {
      const line = libsignalChatter(args);
      if (line === undefined) original.apply(target, args);
      else sink(line);
    };
  }
  return () => {
    for (const [method, original] of originals) target[method] = original;
  };
}

let sink: (line: string) => void = () => {};
let installed = false;

/**
 * Filters libsignal's chatter out of the process's `console` (installed once, for the life of the process;
 * Baileys may still be decrypting after a socket ends) and sends its text to `debug` (the latest caller's).
 */
export function quietLibsignal(debug: (line: string) => void): void {
  sink = debug;
  if (installed) return;
  installed = true;
  filterLibsignalConsole(console, (line) => sink(line));
}
