/**
 * The codes of tool errors, keyed by code. Extensible by declaration merging
 * (a plugin that fails calls for its own reason adds its code here).
 *
 * The first group are result codes: `ctx.tools.execute()` never rejects, it
 * returns an error result carrying one of them. The second group are thrown by
 * the registry's API for programmer errors.
 */
export interface ToolErrorCodeMap {
  /** The tool body (or a `tools/execute` wrapper, or `finalizeContent`) threw or returned malformed output. */
  TOOL_ERROR: true
  /** A policy refused the call: `tools/pre-execute`, `ask` without approval, the approval service, or a guard. */
  DENIED: true
  /** A `tools/post-execute` listener withheld the result from the model. */
  BLOCKED: true
  /** The call ran past its `timeoutMs` (or a wrapper's timeout). */
  TIMEOUT: true
  /** The caller's signal aborted the call after its body started. */
  ABORTED: true
  /** The caller's signal aborted the call before its body started. */
  ABORTED_BEFORE_DISPATCH: true
  /** No tool of that name is visible to the calling agent. */
  UNKNOWN_TOOL: true
  /** The arguments are not a JSON object, or the tool's validator refused them. */
  INVALID_ARGUMENTS: true

  /** `register()` was given a definition that cannot be sent to a model or run. */
  INVALID_DEFINITION: true
  /** `deferContext()` was given something that is not a context record. */
  INVALID_CONTEXT: true
  /** `deferContext()` was called after the call's result was produced. */
  CALL_SETTLED: true
}

export type ToolErrorCode = keyof ToolErrorCodeMap

/**
 * An error of the tools layer: a string `code` and a message a person (or the
 * model, for result codes) can act on. A tool body may throw one to choose the
 * code of its error result; anything else it throws becomes `TOOL_ERROR`.
 */
export class ToolError extends Error {
  override readonly name = 'ToolError'
  constructor(
    readonly code: ToolErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** Whether `error` is a `ToolError` (also across two copies of this package). */
export function isToolError(error: unknown): error is ToolError {
  return error instanceof ToolError || (error instanceof Error && error.name === 'ToolError' && typeof (error as ToolError).code === 'string')
}
