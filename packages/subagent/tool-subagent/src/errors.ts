import { ToolError, type ToolErrorCode } from '@deepseek-ai/dsh-tools'

declare module '@deepseek-ai/dsh-tools' {
  interface ToolErrorCodeMap {
    /** `task`: the subagent's run failed (the message says why, and quotes its last words when it had any). */
    SUBAGENT_FAILED: true
    /** `task`: the agent type does not exist (the message lists the types). */
    UNKNOWN_AGENT_TYPE: true
    /** `task`: the caller is a subagent already as deep as subagents may nest. */
    DEPTH_LIMIT: true
    /** `task_output` / `task_kill`: the calling agent has no task of that id. */
    TASK_NOT_FOUND: true
  }
}

/** The `ToolError` a tool of this package throws: the code the model reads, and a message that says what to do. */
export function taskToolError(code: ToolErrorCode, message: string, cause?: unknown): ToolError {
  return new ToolError(code, message, cause === undefined ? undefined : { cause })
}
