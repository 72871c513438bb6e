import { contentProblem, createAssembler, type StreamChunk, type TokenUsage } from '@deepseek-ai/dsh-llm'

/**
 * How a stream a test read ended: on its own (`ended`), by throwing
 * (`threw`), or because the reader stopped it (`stopped`: `return()`).
 */
export type StreamEnding = 'ended' | 'threw' | 'stopped'

/** A stream as a test read it. */
export interface PlayedStream {
  /** Every chunk it yielded, in order. */
  readonly chunks: readonly StreamChunk[]
  readonly ending: StreamEnding
  /** What it threw, when `ending` is `threw`. */
  readonly error?: unknown
}

const finishKinds = new Set(['stop', 'tool-calls', 'max-tokens', 'aborted', 'error'])
const usageFields = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const

const isIndex = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
const nonEmpty = (value: unknown) => typeof value === 'string' && value.length > 0

function failureProblem(failure: unknown): string | undefined {
  if (failure === null || typeof failure !== 'object') return 'its failure must be an object'
  const f = failure as Record<string, unknown>
  if (!nonEmpty(f.code)) return 'its failure needs a code'
  if (!nonEmpty(f.message)) return 'its failure needs a message a person can act on'
  return undefined
}

function usageProblem(usage: unknown, previous: TokenUsage | undefined): string | undefined {
  if (usage === null || typeof usage !== 'object') return 'usage must be an object'
  const u = usage as Record<string, unknown>
  for (const field of usageFields) {
    const value = u[field]
    const required = field === 'inputTokens' || field === 'outputTokens'
    if (value === undefined && !required) continue
    if (!isCount(value)) return `usage.${field} must be a non-negative integer (got ${JSON.stringify(value)})`
    const before = previous?.[field]
    if (before !== undefined && (value as number) < before) {
      return `usage.${field} went down from ${before} to ${String(value)}: usage snapshots are cumulative`
    }
  }
  return undefined
}

/**
 * Every way `played` breaks the stream protocol (R-LLM-6), as sentences
 * naming the chunk; empty when it follows it. Checked over the whole sequence:
 *
 * - every chunk is an object of a known type; delta indices are non-negative
 *   integers; a block's kind is fixed by its first chunk;
 * - the first `tool-call-delta` of a block carries a non-empty `id` and
 *   `name`, later ones omit or repeat them, and no two tool calls share an id;
 * - `usage` counts are non-negative integers that never go down (cumulative
 *   snapshots);
 * - at most one `finish`, and nothing after it (no chunk, no throw); a stream
 *   that ended on its own has exactly one; its reason has a known kind, and an
 *   `error` (or an `aborted` with a failure) carries a code and a message;
 * - the assembled message is valid: dsh-llm's assembler accepts the sequence
 *   and its content passes `contentProblem`.
 */
export function protocolProblems(played: PlayedStream): string[] {
  const problems: string[] = []
  const kinds = new Map<number, string>()
  const callIds = new Map<string, number>()
  const calls = new Map<number, { id: string; name: string }>()
  let usage: TokenUsage | undefined
  let finishAt = -1
  played.chunks.forEach((chunk, n) => {
    const at = `chunk ${n}`
    if (chunk === null || typeof chunk !== 'object') return void problems.push(`${at} is not a chunk object`)
    if (finishAt >= 0) problems.push(`${at} (${String(chunk.type)}) came after the finish at chunk ${finishAt}`)
    switch (chunk.type) {
      case 'text-delta':
      case 'reasoning-delta':
      case 'redacted-reasoning-delta':
      case 'tool-call-delta': {
        if (!isIndex(chunk.index)) return void problems.push(`${at}: index must be a non-negative integer (got ${JSON.stringify(chunk.index)})`)
        const kind = kinds.get(chunk.index)
        if (kind === undefined) kinds.set(chunk.index, chunk.type)
        else if (kind !== chunk.type) problems.push(`${at}: block ${chunk.index} started with a ${kind} and then got a ${chunk.type}`)
        if (chunk.type === 'redacted-reasoning-delta') {
          if (typeof chunk.data !== 'string') problems.push(`${at}: data must be a string`)
          return
        }
        if (chunk.type !== 'tool-call-delta') {
          if (typeof chunk.text !== 'string') problems.push(`${at}: text must be a string`)
          return
        }
        if (typeof chunk.argumentsDelta !== 'string') problems.push(`${at}: argumentsDelta must be a string`)
        const call = calls.get(chunk.index)
        if (call === undefined) {
          if (kind !== undefined) return
          if (!nonEmpty(chunk.id) || !nonEmpty(chunk.name)) {
            return void problems.push(`${at}: the first tool-call-delta of block ${chunk.index} must carry its id and name`)
          }
          const holder = callIds.get(chunk.id!)
          if (holder !== undefined) problems.push(`${at}: tool call ${chunk.index} has the id ${JSON.stringify(chunk.id)} of tool call ${holder}`)
          callIds.set(chunk.id!, chunk.index)
          calls.set(chunk.index, { id: chunk.id!, name: chunk.name! })
        } else if ((chunk.id !== undefined && chunk.id !== call.id) || (chunk.name !== undefined && chunk.name !== call.name)) {
          problems.push(`${at}: tool call ${chunk.index} changed its id or name mid-stream`)
        }
        return
      }
      case 'usage': {
        const problem = usageProblem(chunk.usage, usage)
        if (problem) problems.push(`${at}: ${problem}`)
        else usage = chunk.usage
        return
      }
      case 'finish': {
        if (finishAt >= 0) problems.push(`${at} is a second finish`)
        else finishAt = n
        const reason = chunk.reason as { kind?: unknown; failure?: unknown } | null
        if (reason === null || typeof reason !== 'object' || !finishKinds.has(reason.kind as string)) {
          return void problems.push(`${at}: the finish reason must have a kind among ${[...finishKinds].join(', ')}`)
        }
        if (reason.kind === 'error' || (reason.kind === 'aborted' && reason.failure !== undefined)) {
          const problem = failureProblem(reason.failure)
          if (problem) problems.push(`${at}: the ${reason.kind} finish: ${problem}`)
        }
        return
      }
      default:
        problems.push(`${at} has an unknown type ${JSON.stringify((chunk as { type?: unknown }).type)}`)
    }
  })
  if (played.ending === 'ended' && finishAt < 0) problems.push(`the stream ended after ${played.chunks.length} chunk(s) without a finish`)
  if (played.ending === 'threw' && finishAt >= 0) problems.push(`the stream threw after its finish at chunk ${finishAt}`)
  const assembler = createAssembler()
  for (const chunk of played.chunks) assembler.push(chunk)
  if (assembler.failure !== undefined) problems.push(`dsh-llm's assembler refuses the sequence: ${assembler.failure.message}`)
  else {
    const problem = contentProblem(assembler.result().content)
    if (problem) problems.push(`the assembled message is invalid: ${problem}`)
  }
  return problems
}
