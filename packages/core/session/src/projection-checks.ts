/**
 * The two projections the log applies when it commits an event (R-SES-3):
 * the built-in one of the model-visible types, and the check of what a
 * merged type's projector returned.
 */
import type { Message } from '@deepseek-ai/dsh-llm'
import { Kind } from './built-in-types'
import { messageProblem } from './event-shapes'
import { formatPath, type JsonGuard } from './log/lossless-json'
import type { SessionProjection } from './projection'

/** The built-in projection (R-SES-3): the four model-visible types; an empty assistant message is log-only. */
export function defaultProjection(kind: Kind, data: Record<string, any>): Message | undefined {
  switch (kind) {
    case Kind.UserMessage:
    case Kind.SteeringMessage:
    case Kind.ToolResult:
      return data.message
    case Kind.AssistantMessage:
      return data.message.content.length > 0 ? data.message : undefined
    default:
      return undefined
  }
}

/** Checks a projection; on success, `json` holds its messages ready for `freezeChecked`. */
export function projectionProblem(json: JsonGuard, projection: SessionProjection, seq: number): string | undefined {
  if (typeof projection !== 'object' || Array.isArray(projection)) return 'a projection must be an object { messages?, shadow? }'
  const { messages, shadow } = projection
  if (messages !== undefined) {
    if (!Array.isArray(messages)) return 'messages must be an array'
    const problem = json.problem(messages)
    if (problem) return `${formatPath('messages', problem.path)} ${problem.reason}`
    for (let i = 0; i < messages.length; i++) {
      const shape = messageProblem(messages[i], undefined, `messages[${i}]`)
      if (shape) return shape
    }
  }
  if (shadow !== undefined) {
    if (shadow === null || typeof shadow !== 'object') return 'shadow must be an object { from, to }'
    const { from, to } = shadow
    if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || from > to || to > seq) {
      return `shadow must satisfy 0 ≤ from ≤ to ≤ ${seq} (the projecting event's seq), got { from: ${from}, to: ${to} }`
    }
  }
  return undefined
}
