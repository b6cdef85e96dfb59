/**
 * Every tool the owner is offered in the primary session with the built-in tools and `tools.main: ["*"]`
 * (docs/agent.md, Who gets tools), sorted: the tests that check what a turn is offered compare against it.
 */
export const OWNER_TOOLS: readonly string[] = [
  "bash",
  "check_agent_run",
  "edit_file",
  "job_kill",
  "job_output",
  "job_status",
  "read_file",
  "remind",
  "send_file",
  "spawn_agent",
  "write_file",
];
