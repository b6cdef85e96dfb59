import type { Authority, ChatType } from "../plugin-api/types.js";

/**
 * A tool call that waits for the person's answer (docs/tools.md, Approvals), as the journal keeps it from the
 * `approval-asked` record until its `approval-decided` record: what `/status` lists, what `/approve` answers.
 */
export interface ApprovalAsk {
  /** The approval's own id. */
  id: string;
  /** When it was asked (ms). */
  at: number;
  sessionKey: string;
  /** The journal record of the turn that parked. */
  jid: string;
  /** The call that asked, then the rest of its batch that waits with it (in order). */
  callId: string;
  waiting: string[];
  tool: string;
  /** What the call will do, in words (the whole command and its folder; a file's path and size). */
  what: string;
  /** `bash` only: the whole command (what `/approve always` adds to the allowlist). */
  command?: string;
  /** The chat the turn came from: where the prompt went and the answer's reply goes. */
  chat: { channel: string; chatId: string; chatType: ChatType };
  /**
   * Where the prompt and the decision's note went when not `chat`: an automated turn asks in the owner's chat
   * (runtime/authority/approval-chat.ts). The resumed turn still answers in `chat`.
   */
  promptTo?: { channel: string; chatId: string; chatType: ChatType };
  /** The person whose turn it is: they (or the owner) may answer. */
  requester: { channel: string; senderId: string; authority: Authority };
  /**
   * A sub-agent's call (docs/tools.md, Sub-agents): the run's id. `jid` is then `subagent:<id>` (no journal record
   * of the session's parked), the requester is whoever's turn spawned it, and the answer resumes the child.
   */
  subagent?: string;
}

/**
 * How an approval was decided. `already-resumed`: found still listed after its batch had been resumed (a kill cut
 * the decision's record short), closed by the gateway.
 */
export type ApprovalDecisionKind =
  | "approve"
  | "approve-always"
  | "deny"
  | "wrote-instead"
  | "already-resumed";
