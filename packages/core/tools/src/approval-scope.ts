// Its own file so that types.ts (the `ask` decision) and approval.ts can both name it without importing each other.

/**
 * Which calls a remembered answer covers: calls of `tool` (a tool name or a
 * glob such as `edit_*`; the asked call's own tool when absent) whose path
 * matches the `path` glob, or whose command has every part starting with the
 * `command` prefix, when those are given. The policy that asked decides how
 * it reads a scope; dsh-tools only carries it.
 */
export interface ApprovalScope {
  readonly tool?: string
  readonly path?: string
  readonly command?: string
}
