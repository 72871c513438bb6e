import type { ContentBlock } from './content'

/**
 * Checks that `value` is a well-formed array of content blocks, and returns a
 * description of the first problem (with its path), or `undefined` when it is
 * fine. Known block types are checked field by field; a block of a type merged
 * in by a plugin only needs a string `type`. Callers turn a problem into their
 * own typed error (dsh-agent: `INVALID_INPUT`) before anything is enqueued.
 */
export function contentProblem(value: unknown, path = 'content'): string | undefined {
  const problem = contentSuffix(value)
  return problem === undefined ? undefined : path + problem
}

// The checks below return what is wrong as the rest of a sentence that starts with the value's path, and build
// that text only for a problem: valid content (every message the session admits) costs no string building, which
// matters before V8 optimizes these checks (the cold round).

/** What is wrong with `value` as an array of content blocks, after its path (`[2].text must be a string`). */
function contentSuffix(value: unknown): string | undefined {
  if (!Array.isArray(value)) return ' must be an array of content blocks'
  for (let i = 0; i < value.length; i++) {
    const problem = blockSuffix(value[i])
    if (problem !== undefined) return `[${i}]${problem}`
  }
  return undefined
}

function blockSuffix(block: unknown): string | undefined {
  if (block === null || typeof block !== 'object' || Array.isArray(block)) return ' must be an object'
  const b = block as Record<string, unknown>
  const type = b.type
  if (typeof type !== 'string' || type.length === 0) return '.type must be a non-empty string'
  switch (type) {
    case 'text':
      return typeof b.text === 'string' ? undefined : '.text must be a string'
    case 'reasoning':
      if (typeof b.text !== 'string') return '.text must be a string'
      return b.signature === undefined || typeof b.signature === 'string' ? undefined : '.signature must be a string'
    case 'redacted-reasoning':
      return typeof b.data === 'string' ? undefined : '.data must be a string'
    case 'image':
      if (typeof b.mediaType !== 'string' || !b.mediaType) return '.mediaType must be a non-empty string'
      return typeof b.data === 'string' ? undefined : '.data must be a base64 string'
    case 'tool-call':
      if (typeof b.id !== 'string' || !b.id) return '.id must be a non-empty string'
      if (typeof b.name !== 'string' || !b.name) return '.name must be a non-empty string'
      return typeof b.arguments === 'string' ? undefined : '.arguments must be a JSON string'
    case 'tool-result': {
      if (typeof b.toolCallId !== 'string' || !b.toolCallId) return '.toolCallId must be a non-empty string'
      if (b.isError !== undefined && typeof b.isError !== 'boolean') return '.isError must be a boolean'
      const nested = contentSuffix(b.content)
      return nested === undefined ? undefined : `.content${nested}`
    }
    default:
      return undefined
  }
}

/** Whether `value` is a well-formed content block array (see `contentProblem`). */
export function isContent(value: unknown): value is ContentBlock[] {
  return contentProblem(value) === undefined
}
