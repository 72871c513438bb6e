/** The codes of errors thrown or rejected by `ctx.systemPrompt`. Extensible by declaration merging. */
export interface SystemPromptErrorCodeMap {
  /** `section()` was given something that is not a section. */
  INVALID_SECTION: true
  /** `assembleContextFor()` was given variables that are not strings. */
  INVALID_VARS: true
  /** A section's `render` threw or returned something other than a string. */
  RENDER_FAILED: true
  /** A `system-prompt/assemble` listener returned something other than `{ system, tools }`. */
  INVALID_ASSEMBLY: true
}

export type SystemPromptErrorCode = keyof SystemPromptErrorCodeMap

/** An error of `ctx.systemPrompt`: a `code` and a message that names the section or listener at fault. */
export class SystemPromptError extends Error {
  override readonly name = 'SystemPromptError'
  constructor(
    readonly code: SystemPromptErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
