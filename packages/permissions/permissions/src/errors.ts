/** The codes of `PermissionsError`, keyed by code. */
export interface PermissionsErrorCodeMap {
  /** A settings file (the user's or the workspace's) is not valid JSON or holds a malformed rule. */
  INVALID_SETTINGS: true
  /** A mode name that is not `plan`, `default`, `accept-edits` or `bypass`. */
  INVALID_MODE: true
  /** `bypass` was asked for without the explicit permission to use it (`allowBypass`). */
  BYPASS_NOT_ALLOWED: true
  /** A child agent was asked to be more permissive than its parent. */
  ABOVE_PARENT: true
  /** The agent is not one this service knows (not created in this app, or disposed). */
  UNKNOWN_AGENT: true
  /** The trust store in the user's config directory could not be read or written. */
  TRUST_STORE: true
}

export type PermissionsErrorCode = keyof PermissionsErrorCodeMap

/** An error of dsh-permissions: a string `code` and a message a person can act on. */
export class PermissionsError extends Error {
  override readonly name = 'PermissionsError'
  constructor(
    readonly code: PermissionsErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
