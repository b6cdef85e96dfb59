import makeWASocket, { jidNormalizedUser, type WASocket } from "@whiskeysockets/baileys";
import qrcode from "qrcode-terminal";
import {
  credentialsDir,
  openAuthState,
  readLinkedAccount,
  removeAuthState,
  type WhatsappAuth,
} from "./auth-state.js";
import { silentBaileysLogger } from "./baileys-logger.js";
import type { WhatsappConfig } from "./config.js";
import type { MakeSocket } from "./connection.js";
import { endSocket } from "./end-socket.js";
import { quietLibsignal } from "./libsignal-console.js";
import { e164 } from "./to-inbound.js";

/**
 * The flows of `clawdis login` / `clawdis logout` (cli-commands.ts). The CLI has made sure no gateway owns the
 * state directory (one socket per account) and holds it while this runs. Contract:
 * - login links a new device by QR code (printed in the terminal, replaced as WhatsApp rotates it) or, with a
 *   phone number, by an 8-character pairing code; it waits for the scan, follows WhatsApp's "restart required"
 *   (515) after pairing with a fresh socket, and ends 0 once the link is open and the credentials are on disk;
 * - an expired QR code (WhatsApp's refs ran out), a refused link or a lost connection end 1 with what happened,
 *   and remove what this attempt wrote (no half-linked credentials for the gateway to trip on);
 * - an account already linked is left alone (0, with "run `clawdis logout` first" to link another);
 * - logout tells WhatsApp (best effort, a few seconds) and removes `<state>/credentials/whatsapp/`; sessions and
 *   transcripts stay.
 */

/** What `clawdis login` / `logout` (cli-commands.ts) hand the flows. */
export interface LoginFlowOptions {
  stateDir: string;
  /** The plugin's settings (the `whatsapp` section, validated). */
  settings: WhatsappConfig;
  /** Link by pairing code for this E.164 number instead of a QR code. */
  pairingNumber?: string;
  /** Where the flow talks to the person (the terminal's stderr). */
  print(text: string): void;
  signal: AbortSignal;
}

/** The login and logout flows; each resolves to an exit code. */
export interface WhatsappLoginFlows {
  login(options: LoginFlowOptions): Promise<number>;
  logout(options: Omit<LoginFlowOptions, "pairingNumber">): Promise<number>;
}

/** How long logout waits for WhatsApp to take the unlink before removing the credentials anyway. */
const LOGOUT_WAIT_MS = 5_000;
/** Restarts (515) one login follows before giving up. */
const MAX_RESTARTS = 3;

export function createWhatsappLogin(
  deps: { makeSocket?: MakeSocket; qrTimeoutMs?: number } = {},
): WhatsappLoginFlows {
  const makeSocket = deps.makeSocket ?? makeWASocket;
  return {
    async login(options) {
      const section = options.settings;
      const dir = credentialsDir(options.stateDir);
      const pairing = options.pairingNumber;
      if (pairing !== undefined && !/^\+[1-9][0-9]{5,15}$/.test(pairing)) {
        options.print(
          `--pairing-code needs the phone number in E.164, like +4915123456789 (got "${pairing}")\n`,
        );
        return 2;
      }
      let linked: Awaited<ReturnType<typeof readLinkedAccount>>;
      let auth: WhatsappAuth;
      try {
        linked = await readLinkedAccount(dir);
        if (linked) {
          options.print(
            `WhatsApp is already linked as ${e164(jidNormalizedUser(linked.id)) ?? linked.id} (credentials in ${dir}); run \`clawdis logout\` first to link another account\n`,
          );
          return 0;
        }
        auth = await openAuthState(dir);
      } catch (error) {
        options.print(`${(error as Error).message}\n`);
        return 1;
      }
      // Like Baileys' own logger here, libsignal's session lines are dropped (the flow says what matters).
      quietLibsignal(() => {});
      const connect = () =>
        makeSocket({
          auth: auth.state,
          logger: silentBaileysLogger,
          markOnlineOnConnect: false,
          syncFullHistory: false,
          shouldSyncHistoryMessage: () => false,
          ...(deps.qrTimeoutMs ? { qrTimeout: deps.qrTimeoutMs } : {}),
          ...(section.socketUrl ? { waWebSocketUrl: section.socketUrl } : {}),
        });
      const result = await runLogin(connect, auth, options, pairing);
      if (result !== 0) await auth.flush().then(() => removeAuthState(dir));
      return result;
    },

    async logout(options) {
      const section = options.settings;
      const dir = credentialsDir(options.stateDir);
      let linked: Awaited<ReturnType<typeof readLinkedAccount>>;
      try {
        linked = await readLinkedAccount(dir);
      } catch {
        linked = undefined; // unreadable credentials: nothing to tell WhatsApp; remove them below
      }
      if (linked) {
        const auth = await openAuthState(dir).catch(() => undefined);
        if (auth) {
          const sock = makeSocket({
            auth: auth.state,
            logger: silentBaileysLogger,
            markOnlineOnConnect: false,
            ...(section.socketUrl ? { waWebSocketUrl: section.socketUrl } : {}),
          });
          const told = await tellLogout(sock, options.signal);
          endSocket(sock);
          await auth.flush();
          if (!told)
            options.print(
              "WhatsApp could not be told in time; remove the device on the phone (Linked devices)\n",
            );
        }
      }
      await removeAuthState(dir);
      options.print(
        linked
          ? `Unlinked ${e164(jidNormalizedUser(linked.id)) ?? linked.id}; removed ${dir} (sessions and transcripts are kept)\n`
          : `WhatsApp was not linked; removed ${dir}\n`,
      );
      return 0;
    },
  };
}

/** Opens the socket, waits for the link (following 515 restarts); 0 when linked, 1 when not. */
async function runLogin(
  connect: () => WASocket,
  auth: WhatsappAuth,
  options: LoginFlowOptions,
  pairing: string | undefined,
): Promise<number> {
  let restarts = 0;
  for (;;) {
    const outcome = await attempt(connect(), auth, options, pairing, restarts > 0);
    if (outcome === "restart" && restarts < MAX_RESTARTS) {
      restarts += 1;
      options.print("WhatsApp asks for a restart after pairing; reconnecting…\n");
      continue;
    }
    if (outcome === "restart") {
      options.print("WhatsApp keeps asking for a restart; run `clawdis login` again\n");
      return 1;
    }
    return outcome;
  }
}

function attempt(
  sock: WASocket,
  auth: WhatsappAuth,
  options: LoginFlowOptions,
  pairing: string | undefined,
  afterRestart: boolean,
): Promise<number | "restart"> {
  return new Promise((resolve) => {
    let qrs = 0;
    let settled = false;
    const finish = (result: number | "restart") => {
      if (settled) return;
      settled = true;
      options.signal.removeEventListener("abort", onAbort);
      endSocket(sock);
      resolve(result);
    };
    const onAbort = () => {
      options.print("Login cancelled\n");
      finish(1);
    };
    options.signal.addEventListener("abort", onAbort, { once: true });
    sock.ev.on("creds.update", () => {
      void auth.saveCreds();
    });
    sock.ev.on("connection.update", (update) => {
      if (update.qr) {
        qrs += 1;
        if (pairing !== undefined) {
          if (qrs === 1) {
            sock.requestPairingCode(pairing.slice(1)).then(
              (code) =>
                options.print(
                  `On the phone: WhatsApp → Linked devices → Link a device → Link with phone number instead, and enter\n\n    ${code.slice(0, 4)}-${code.slice(4)}\n\n`,
                ),
              (error: unknown) => {
                options.print(`WhatsApp did not give a pairing code: ${(error as Error).message}\n`);
                finish(1);
              },
            );
          }
          return;
        }
        options.print(
          qrs === 1
            ? "Scan this QR code with WhatsApp on the phone (Settings → Linked devices → Link a device):\n"
            : `The QR code changed (WhatsApp rotates it); scan this one (${qrs}):\n`,
        );
        qrcode.generate(update.qr, { small: true }, (art) => options.print(`${art}\n`));
      }
      if (update.connection === "open") {
        const me = sock.authState.creds.me;
        void auth.flush().then(() => {
          options.print(
            `Linked as ${e164(jidNormalizedUser(me?.id)) ?? me?.id ?? "?"}; start the gateway with whatsapp.enabled: true\n`,
          );
          finish(0);
        });
        return;
      }
      if (update.connection === "close") {
        const error = update.lastDisconnect?.error as
          | { output?: { statusCode?: number }; message?: string }
          | undefined;
        const code = error?.output?.statusCode;
        if (code === 515) return finish("restart");
        if (code === 408 && qrs > 0 && !afterRestart) {
          options.print(
            pairing !== undefined
              ? "The pairing code expired before it was entered; run `clawdis login --pairing-code` again\n"
              : "The QR code expired before it was scanned; run `clawdis login` again\n",
          );
          return finish(1);
        }
        if (code === 401 || code === 403) {
          options.print(`WhatsApp refused the link (${code}); run \`clawdis login\` again\n`);
          return finish(1);
        }
        options.print(
          `The connection to WhatsApp closed (${code ?? "network error"}${error?.message ? `: ${error.message}` : ""}) before the link was made; run \`clawdis login\` again\n`,
        );
        finish(1);
      }
    });
  });
}

/** Asks WhatsApp to unlink this device, once the socket is open; false when that did not happen in time. */
async function tellLogout(sock: WASocket, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), LOGOUT_WAIT_MS);
    const done = (told: boolean) => {
      clearTimeout(timer);
      resolve(told);
    };
    signal.addEventListener("abort", () => done(false), { once: true });
    sock.ev.on("connection.update", (update) => {
      if (update.connection === "open") {
        sock.logout().then(
          () => done(true),
          () => done(false),
        );
      } else if (update.connection === "close") {
        const code = (update.lastDisconnect?.error as { output?: { statusCode?: number } } | undefined)
          ?.output?.statusCode;
        if (code === 401) done(true);
      }
    });
  });
}

export const whatsappLogin: WhatsappLoginFlows = createWhatsappLogin();
