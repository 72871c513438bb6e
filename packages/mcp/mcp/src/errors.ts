import { ToolError } from '@deepseek-ai/dsh-tools'

declare module '@deepseek-ai/dsh-tools' {
  interface ToolErrorCodeMap {
    /**
     * An MCP tool was called while its server is not connected (it failed to
     * start, exited, or is restarting), or the server went away during the
     * call; the message names the server and its state.
     */
    SERVER_UNAVAILABLE: true
    /** The MCP server answered the call with a protocol error (not a tool result); the message quotes it. */
    SERVER_ERROR: true
  }
}

/** The codes of `McpError`, keyed by code. */
export interface McpErrorCodeMap {
  /** A server entry is malformed (neither `command` nor `url`, a field of the wrong type, an unknown `type`), or names an environment variable that is not set. */
  INVALID_CONFIG: true
  /** `add()` was given the name of a server that already exists in the same scope. */
  DUPLICATE_SERVER: true
  /** `restart()` or `client()` named a server that this scope does not have. */
  UNKNOWN_SERVER: true
  /** An MCP config file could not be read or is not valid JSON. */
  CONFIG_FILE: true
}

export type McpErrorCode = keyof McpErrorCodeMap

/**
 * An error of dsh-mcp's API: a string `code` and a message a person can act
 * on. Messages never quote the values of a server's `env` or `headers`.
 * (Errors of tool calls are results, not throws: see `ToolErrorCodeMap`.)
 */
export class McpError extends Error {
  override readonly name = 'McpError'
  constructor(
    readonly code: McpErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** A tool-call failure the model reads: a `ToolError` with one of the MCP result codes (or `TIMEOUT`, `TOOL_ERROR`). */
export function callError(code: 'SERVER_UNAVAILABLE' | 'SERVER_ERROR' | 'TIMEOUT' | 'TOOL_ERROR', message: string): ToolError {
  return new ToolError(code, message)
}
