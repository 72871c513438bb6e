import { contentProblem, deepFreeze, frozenTextContent, type ContentBlock, type JsonObject, type MessageId, type MessageSource } from '@deepseek-ai/dsh-llm'
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

/** `frozenCopy`'s answer for a value it refuses: `copyJson` then names the problem. */
const REFUSED: unique symbol = Symbol('refused')

/** Deeper nesting is refused by the fast copy and left to `copyJson` to diagnose. */
const MAX_FAST_DEPTH = 64

/**
 * The valid path of `copyJson`: a deep-frozen copy of a JSON value, built
 * without path strings or a `Set` (ancestors are kept by depth, as cycles
 * are only ever through them), or `REFUSED` at the first thing `copyJson`
 * would refuse. Each copied object and array is frozen as soon as it is
 * complete, so the admitted record needs no second walk to freeze it.
 */
function frozenCopy(value: unknown, depth: number, ancestors: unknown[]): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) ? value : REFUSED
    case 'object': {
      if (value === null) return null
      if (depth >= MAX_FAST_DEPTH) return REFUSED
      for (let i = 0; i < depth; i++) if (ancestors[i] === value) return REFUSED
      ancestors[depth] = value
      if (Array.isArray(value)) {
        const array: unknown[] = []
        for (let i = 0; i < value.length; i++) {
          const item: unknown = value[i]
          if (item === undefined) return REFUSED
          const copy = frozenCopy(item, depth + 1, ancestors)
          if (copy === REFUSED) return REFUSED
          array.push(copy)
        }
        return Object.freeze(array)
      }
      if (!isPlainObject(value)) return REFUSED
      const object: Record<string, unknown> = {}
      for (const key in value) {
        const entry = value[key]
        if (entry === undefined) continue // absent optional field
        const copy = frozenCopy(entry, depth + 1, ancestors)
        if (copy === REFUSED) return REFUSED
        object[key] = copy
      }
      return Object.freeze(object)
    }
    default:
      return REFUSED
  }
}

/** The ancestors of the running `frozenCopy` (admission is synchronous and not reentrant). */
const ancestors: unknown[] = []

/**
 * A detached, deep-frozen copy of a JSON value, refusing anything that would
 * not survive a round trip (undefined, functions, symbols, bigint,
 * non-finite numbers, class instances, cycles) with an `INVALID_INPUT` that
 * names the path. The copy detaches the admitted record from the caller's
 * objects.
 */
function copyJson(value: unknown, path: string): unknown {
  const copy = frozenCopy(value, 0, ancestors)
  ancestors.length = 0
  if (copy !== REFUSED) return copy
  // `diagnose` throws for everything the fast copy refuses but nesting deeper than it goes.
  return deepFreeze(diagnose(value, path, new Set()))
}

/** The slow copy with paths: throws the problem `frozenCopy` refused, naming where it is. */
function diagnose(value: unknown, path: string, seen: Set<object>): unknown {
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
          array.push(diagnose(value[i], `${path}[${i}]`, seen))
        }
        out = array
      } else if (isPlainObject(value)) {
        const object: Record<string, unknown> = {}
        for (const key of Object.keys(value)) {
          const entry = value[key]
          if (entry === undefined) continue // absent optional field
          object[key] = diagnose(entry, `${path}.${key}`, seen)
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

/**
 * The frozen content array `resolveAgentInput` built last from a string (one
 * text block). It is valid and frozen by construction, so admission does not
 * walk and copy it again; no other object can be identical to it. Only the
 * last one: a helper's input is admitted right after it was resolved, and an
 * older one is checked as any array is. (A `WeakSet` of every such array made
 * each follow-up pay an insertion into a table that only grows with the
 * session, and every garbage collection walk it.)
 */
let builtText: readonly ContentBlock[] | undefined

function checkContent(value: unknown, path: string): ContentBlock[] {
  if (value === builtText && value !== undefined) {
    const block = (value as readonly ContentBlock[])[0] as { text: string }
    if (block.text.trim() === '') invalid(`${path} is empty: an input needs at least one non-blank content block`)
    return value as ContentBlock[]
  }
  const problem = contentProblem(value, path)
  if (problem) invalid(problem)
  const blocks = value as ContentBlock[]
  let blank = true
  for (let i = 0; i < blocks.length && blank; i++) {
    const block = blocks[i]!
    blank = block.type === 'text' && block.text.trim() === ''
  }
  if (blank) invalid(`${path} is empty: an input needs at least one non-blank content block`)
  return copyJson(value, path) as ContentBlock[]
}

function requireNonEmpty(source: Record<string, unknown>, field: string): void {
  if (typeof source[field] !== 'string' || source[field] === '') invalid(`source.${field} must be a non-empty string`)
}

/** The default source of the helpers' input, shared and frozen (admitted as is). */
const USER_SOURCE: MessageSource = Object.freeze({ kind: 'user' })
/** The default metadata of the helpers' input, shared and frozen (admitted as is). */
const NO_METADATA: JsonObject = Object.freeze({})

function checkSource(value: unknown): MessageSource {
  if (value === USER_SOURCE) return USER_SOURCE
  if (!isPlainObject(value) || typeof value.kind !== 'string' || value.kind === '') {
    invalid('source must be an object with a string `kind`')
  }
  switch (value.kind) {
    case 'plugin':
      requireNonEmpty(value, 'plugin')
      break
    case 'model':
      requireNonEmpty(value, 'provider')
      requireNonEmpty(value, 'model')
      break
    case 'tool':
      requireNonEmpty(value, 'callId')
      break
  }
  return copyJson(value, 'source') as MessageSource
}

const noContexts: readonly AdditionalContext[] = Object.freeze([])

function checkContexts(value: unknown): readonly AdditionalContext[] {
  if (!Array.isArray(value)) invalid('contexts must be an array')
  if (value.length === 0) return noContexts
  const contexts: AdditionalContext[] = []
  for (let i = 0; i < value.length; i++) {
    const context: unknown = value[i]
    if (!isPlainObject(context)) invalid(`contexts[${i}] must be an object`)
    if (typeof context.label !== 'string') invalid(`contexts[${i}].label must be a string`)
    contexts.push(Object.freeze({ label: context.label, content: checkContent(context.content, `contexts[${i}].content`) }))
  }
  return Object.freeze(contexts)
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
  const metadata = input.metadata === NO_METADATA ? NO_METADATA : (copyJson(input.metadata, 'metadata') as JsonObject)
  // Every part is a frozen copy already: freezing the record freezes it deeply.
  return Object.freeze({
    id,
    content,
    source,
    contexts,
    placement: input.placement,
    metadata,
    target: input.target,
    wakeup: input.wakeup,
  }) as AgentMessage
}

/**
 * Resolves the helpers' loose input into the admission record: `source`
 * defaults to `{ kind: 'user' }`, `contexts` to `[]`, `placement` to
 * `'separate'`, `metadata` to `{}`. A string becomes one text block.
 */
export function resolveAgentInput(input: AgentInput, target: InboxTarget, wakeup: boolean): ResolvedAgentInput {
  // The defaults are shared frozen values, and a string's content a frozen array built here:
  // admission recognizes them and does not copy them again.
  if (typeof input === 'string') {
    return { content: textContent(input), source: USER_SOURCE, contexts: noContexts, placement: 'separate', metadata: NO_METADATA, target, wakeup }
  }
  if (Array.isArray(input)) {
    return { content: input, source: USER_SOURCE, contexts: noContexts, placement: 'separate', metadata: NO_METADATA, target, wakeup }
  }
  if (!isPlainObject(input)) invalid('input must be a string, an array of content blocks, or an object with `content`')
  const loose = input as Exclude<AgentInput, string | readonly ContentBlock[]>
  const content = typeof loose.content === 'string' ? textContent(loose.content) : loose.content
  return {
    content,
    source: loose.source ?? USER_SOURCE,
    contexts: loose.contexts ?? noContexts,
    placement: loose.placement ?? 'separate',
    metadata: loose.metadata ?? NO_METADATA,
    target,
    wakeup,
  }
}

/**
 * One frozen text block, remembered as built here (see `builtText`). Made by
 * dsh-llm's `frozenTextContent`, so the prompt's user message (made from the
 * admitted item by `createUserMessage`) shares this list instead of copying it.
 */
function textContent(text: string): ContentBlock[] {
  const content = frozenTextContent(text) as ContentBlock[]
  builtText = content
  return content
}
