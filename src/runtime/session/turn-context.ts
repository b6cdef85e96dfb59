import type { OutboundAttachment } from "../../plugin-api/types.js";
import type { SessionPaths } from "../../sessions/session-paths.js";
import type { WorkItem } from "../work-item.js";
import type { SessionIds } from "./ports.js";
import type { SessionTranscript, TurnTrace } from "./session-transcript.js";

/** One message's way through a session, from its session being chosen to its settlement. */
export interface TurnContext {
  /** The session key the message routes to. */
  key: string;
  item: WorkItem;
  /** The messages that joined the item's turn (answered by its reply, settled with it). */
  joined: WorkItem[];
  ids: SessionIds;
  /** Where the session's files are (its transcript, workspace, inbox). */
  paths: SessionPaths;
  transcript: SessionTranscript;
  /** The files the turn attached to its reply. */
  attachments: OutboundAttachment[];
  trace: TurnTrace;
  /**
   * Other records the turn's reply (or failure) ends: the parked turn's, when this turn resumes its batch (the
   * answer's reply answers it too).
   */
  alsoEnd?: string[];
}
