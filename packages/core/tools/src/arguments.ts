import { ToolError } from './errors'
import { messageOf } from './results'
import type { ToolDefinition } from './types'

/**
 * Parses the model's raw argument text and runs the definition's validator.
 * Throws `INVALID_ARGUMENTS` with a message the model can act on. An empty
 * string counts as `{}`: some providers stream no argument text for a tool
 * that takes no parameters.
 *
 * The texts are fixed (not the JSON parser's own message, which changes
 * between Node versions), so the same mistake always costs the same tokens.
 */
export function parseArguments(definition: ToolDefinition, raw: string): unknown {
  let args: unknown
  if (typeof raw !== 'string') {
    throw new ToolError('INVALID_ARGUMENTS', `invalid arguments for ${definition.name}: arguments must be a JSON object`)
  }
  // Only text that does not start with `{` can be blank: the usual object skips the trim (a copy of the text).
  if (raw.length === 0 || (raw.charCodeAt(0) !== 0x7b && raw.trim() === '')) {
    args = {}
  } else {
    try {
      args = JSON.parse(raw)
    } catch {
      throw new ToolError('INVALID_ARGUMENTS', `invalid arguments for ${definition.name}: arguments are not valid JSON`)
    }
  }
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    throw new ToolError('INVALID_ARGUMENTS', `invalid arguments for ${definition.name}: arguments must be a JSON object`)
  }
  if (!definition.validate) return args
  try {
    return definition.validate(args)
  } catch (error) {
    const detail = messageOf(error, 'rejected by the tool')
    throw new ToolError('INVALID_ARGUMENTS', `invalid arguments for ${definition.name}: ${detail}`, { cause: error })
  }
}
