import { contentProblem, deepFreeze, type ContentBlock, type JsonObject, type MessageId, type MessageSource } from '@deepseek-ai/dsh-llm'
import { AgentError } from './errors'
import type { AdditionalContext, AgentInput, AgentMessage, InboxTarget, ResolvedAgentInput } from './types'

function invalid(message: string): never {
  throw new AgentError('INVALID_INPUT', message)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * Copies a JSON value, refusing anything that would not survive a round trip
 * (undefined, functions, symbols, bigint, non-finite numbers, class instances,
 * cycles). The copy detaches the admitted record from the caller's objects.
 */
function copyJson(value: unknown, path: string, seen: Set<object> = new Set()): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) invalid(`${path} must be a finite number`)
      return value
    case 'object': {
      if (value === null) return null
      if (seen.has(value)) invalid(`${path} contains a cycle`)
      seen.add(value)
      let out: unknown
      if (Array.isArray(value)) {
        const array: unknown[] = []
        for (let i = 0; i < value.length; i++) {
          if (value[i] === undefined) invalid(`${path}[${i}] is undefined`)
          array.push(copyJson(value[i], `${path}[${i}]`, seen))
        }
        out = array
      } else if (isPlainObject(value)) {
        const object: Record<string, unknown> = {}
        for (const key of Object.keys(value)) {
          const entry = value[key]
          if (entry === undefined) continue // absent optional field
          object[key] = copyJson(entry, `${path}.${key}`, seen)
        }
        out = object
      } else {
        invalid(`${path} must be plain JSON (got ${(value as object).constructor?.name ?? 'an exotic object'})`)
      }
      seen.delete(value)
      return out
    }
    default:
      return invalid(`${path} must be JSON (got ${typeof value})`)
  }
}

function checkContent(value: unknown, path: string): ContentBlock[] {
  const problem = contentProblem(value, path)
  if (problem) invalid(problem)
  const blocks = value as ContentBlock[]
  if (blocks.every((block) => block.type === 'text' && block.text.trim() === '')) {
    invalid(`${path} is empty: an input needs at least one non-blank content block`)
  }
  return copyJson(value, path) as ContentBlock[]
}

function checkSource(value: unknown): MessageSource {
  if (!isPlainObject(value) || typeof value.kind !== 'string' || value.kind === '') {
    invalid('source must be an object with a string `kind`')
  }
  const nonEmpty = (field: string) => {
    if (typeof value[field] !== 'string' || value[field] === '') invalid(`source.${field} must be a non-empty string`)
  }
  switch (value.kind) {
    case 'plugin':
      nonEmpty('plugin')
      break
    case 'model':
      nonEmpty('provider')
      nonEmpty('model')
      break
    case 'tool':
      nonEmpty('callId')
      break
  }
  return copyJson(value, 'source') as MessageSource
}

function checkContexts(value: unknown): AdditionalContext[] {
  if (!Array.isArray(value)) invalid('contexts must be an array')
  return value.map((context, i) => {
    if (!isPlainObject(context)) invalid(`contexts[${i}] must be an object`)
    if (typeof context.label !== 'string') invalid(`contexts[${i}].label must be a string`)
    return { label: context.label, content: checkContent(context.content, `contexts[${i}].content`) }
  })
}

/**
 * Validates a fully resolved admission record and returns a detached,
 * deep-frozen `AgentMessage` with `id`. Throws `AgentError('INVALID_INPUT')`
 * naming the first problem; nothing is kept from a refused input.
 */
export function admitInput(input: ResolvedAgentInput, id: MessageId): AgentMessage {
  if (!isPlainObject(input)) invalid('input must be an object')
  if (input.target !== 'next-turn' && input.target !== 'next-step') invalid("target must be 'next-turn' or 'next-step'")
  if (typeof input.wakeup !== 'boolean') invalid('wakeup must be a boolean')
  if (input.placement !== 'separate' && input.placement !== 'prompt-prefix') {
    invalid("placement must be 'separate' or 'prompt-prefix'")
  }
  if (!isPlainObject(input.metadata)) invalid('metadata must be a plain JSON object')
  const content = checkContent(input.content, 'content')
  const source = checkSource(input.source)
  const contexts = checkContexts(input.contexts)
  if (input.target === 'next-step' && !input.wakeup && contexts.length > 0) {
    invalid('inject() (next-step without wakeup) takes no contexts: they would have no prompt to attach to')
  }
  const metadata = copyJson(input.metadata, 'metadata') as JsonObject
  return deepFreeze({
    id,
    content,
    source,
    contexts,
    placement: input.placement,
    metadata,
    target: input.target,
    wakeup: input.wakeup,
  })
}

/**
 * Resolves the helpers' loose input into the admission record: `source`
 * defaults to `{ kind: 'user' }`, `contexts` to `[]`, `placement` to
 * `'separate'`, `metadata` to `{}`. A string becomes one text block.
 */
export function resolveAgentInput(input: AgentInput, target: InboxTarget, wakeup: boolean): ResolvedAgentInput {
  if (typeof input === 'string') {
    return { content: [{ type: 'text', text: input }], source: { kind: 'user' }, contexts: [], placement: 'separate', metadata: {}, target, wakeup }
  }
  if (Array.isArray(input)) {
    return { content: input, source: { kind: 'user' }, contexts: [], placement: 'separate', metadata: {}, target, wakeup }
  }
  if (!isPlainObject(input)) invalid('input must be a string, an array of content blocks, or an object with `content`')
  const loose = input as Exclude<AgentInput, string | readonly ContentBlock[]>
  const content = typeof loose.content === 'string' ? [{ type: 'text' as const, text: loose.content }] : loose.content
  return {
    content,
    source: loose.source ?? { kind: 'user' },
    contexts: loose.contexts ?? [],
    placement: loose.placement ?? 'separate',
    metadata: loose.metadata ?? {},
    target,
    wakeup,
  }
}
