/** The codes of the command line's own errors. */
export interface CliErrorCodeMap {
  /** A flag is unknown, misspelt or has a bad value. */
  INVALID_ARGS: true
  /** The config file cannot be read, parsed or validated; the message names the file and the field. */
  INVALID_CONFIG: true
  /** The model route cannot work (unknown provider, no model, the API key variable unset). */
  INVALID_MODEL: true
}

export type CliErrorCode = keyof CliErrorCodeMap

/**
 * A problem with how the command was invoked or configured. `dsh-demo`
 * prints the message and exits with status 2; nothing has been started yet.
 * Messages never quote secrets (an API key is only ever named by the
 * variable that holds it).
 */
export class CliError extends Error {
  override readonly name = 'CliError'
  constructor(
    readonly code: CliErrorCode,
    message: string,
  ) {
    super(message)
  }
}
