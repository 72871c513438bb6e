import { textOf, type TokenUsage } from '@deepseek-ai/dsh-llm'
import type { Session, TurnEndReason } from '@deepseek-ai/dsh-session'
import type { ChildOutcome } from './types'

/** What a child's log says so far, from `from` on. */
export interface ChildProgress {
  /** The text of its last model call (empty when that call only called tools). */
  readonly lastAnswer: string
  /** The last non-empty text it wrote. */
  readonly lastText: string
  readonly usage: TokenUsage
  readonly modelCalls: number
  /** How its last turn ended, once one did. */
  readonly lastEnd: TurnEndReason | undefined
}

/** Reads a child's log from `from` (its first turn): answers, usage, the last turn's end. */
export function childProgress(session: Session, from: number): ChildProgress {
  const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 }
  let modelCalls = 0
  let lastAnswer = ''
  let lastText = ''
  let lastEnd: TurnEndReason | undefined
  const events = session.events
  for (let i = from, length = events.length; i < length; i++) {
    const type = session.typeAt(i)
    if (type !== 'assistant/message' && type !== 'turn/end') continue
    const event = events[i]!
    if (event.type === 'turn/end') {
      lastEnd = event.data.reason
      continue
    }
    if (event.type !== 'assistant/message') continue
    modelCalls++
    const used = event.data.usage
    if (used) {
      usage.inputTokens += used.inputTokens
      usage.outputTokens += used.outputTokens
      for (const key of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
        if (used[key] !== undefined) usage[key] = (usage[key] ?? 0) + used[key]
      }
    }
    lastAnswer = textOf(event.data.message).trim()
    if (lastAnswer) lastText = lastAnswer
  }
  return { lastAnswer, lastText, usage, modelCalls, lastEnd }
}

/**
 * How a child's run ended, from its log: the answer is the text of its last
 * model call when its last turn completed (also when a cancel came after
 * that turn had closed: the answer was given), else its last words (the
 * last text it wrote); an aborted last turn, or a cancelled run
 * (`cancelled`) whose child closed no turn, is `cancelled`; an error, a
 * blocked prompt or a crash-repaired turn is `failed`, with the turn's
 * failure code where it has one. Read once the child is disposed, every
 * turn of it is closed, so the last one is the one that counts.
 */
export function childOutcome(session: Session, from: number, cancelled: boolean): ChildOutcome {
  const progress = childProgress(session, from)
  const base = { answer: progress.lastText, usage: progress.usage, modelCalls: progress.modelCalls }
  const end = progress.lastEnd
  if (end?.kind === 'completed' || end?.kind === 'stopped') return { ...base, answer: progress.lastAnswer, status: 'completed' }
  if (cancelled || end?.kind === 'aborted') {
    return { ...base, status: 'cancelled', error: { code: 'CANCELLED', message: 'the subagent was stopped before it finished' } }
  }
  switch (end?.kind) {
    case 'error':
      return { ...base, status: 'failed', error: { code: end.failure.code, message: end.failure.message } }
    case 'blocked':
      return { ...base, status: 'failed', error: { code: 'SUBAGENT_FAILED', message: `its prompt was blocked${end.reason ? `: ${end.reason}` : ''}` } }
    case 'interrupted':
      return { ...base, status: 'failed', error: { code: 'SUBAGENT_FAILED', message: 'its turn was interrupted' } }
    default:
      return { ...base, status: 'failed', error: { code: 'SUBAGENT_FAILED', message: 'it ended without running a turn' } }
  }
}
