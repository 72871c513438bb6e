import type { ContentBlock } from './content'

/**
 * Checks that `value` is a well-formed array of content blocks, and returns a
 * description of the first problem (with its path), or `undefined` when it is
 * fine. Known block types are checked field by field; a block of a type merged
 * in by a plugin only needs a string `type`. Callers turn a problem into their
 * own typed error (dsh-agent: `INVALID_INPUT`) before anything is enqueued.
 */
export function contentProblem(value: unknown, path = 'content'): string | undefined {
  if (!Array.isArray(value)) return `${path} must be an array of content blocks`
  for (let i = 0; i < value.length; i++) {
    const problem = blockProblem(value[i], `${path}[${i}]`)
    if (problem) return problem
  }
  return undefined
}

function isString(value: unknown): value is string {
  return typeof value === 'string'
}

function blockProblem(block: unknown, path: string): string | undefined {
  if (block === null || typeof block !== 'object' || Array.isArray(block)) return `${path} must be an object`
  const b = block as Record<string, unknown>
  if (!isString(b.type) || b.type.length === 0) return `${path}.type must be a non-empty string`
  switch (b.type) {
    case 'text':
      return isString(b.text) ? undefined : `${path}.text must be a string`
    case 'reasoning':
      if (!isString(b.text)) return `${path}.text must be a string`
      return b.signature === undefined || isString(b.signature) ? undefined : `${path}.signature must be a string`
    case 'redacted-reasoning':
      return isString(b.data) ? undefined : `${path}.data must be a string`
    case 'image':
      if (!isString(b.mediaType) || !b.mediaType) return `${path}.mediaType must be a non-empty string`
      return isString(b.data) ? undefined : `${path}.data must be a base64 string`
    case 'tool-call':
      if (!isString(b.id) || !b.id) return `${path}.id must be a non-empty string`
      if (!isString(b.name) || !b.name) return `${path}.name must be a non-empty string`
      return isString(b.arguments) ? undefined : `${path}.arguments must be a JSON string`
    case 'tool-result':
      if (!isString(b.toolCallId) || !b.toolCallId) return `${path}.toolCallId must be a non-empty string`
      if (b.isError !== undefined && typeof b.isError !== 'boolean') return `${path}.isError must be a boolean`
      return contentProblem(b.content, `${path}.content`)
    default:
      return undefined
  }
}

/** Whether `value` is a well-formed content block array (see `contentProblem`). */
export function isContent(value: unknown): value is ContentBlock[] {
  return contentProblem(value) === undefined
}
