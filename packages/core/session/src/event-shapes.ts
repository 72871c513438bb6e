import { contentProblem } from '@deepseek-ai/dsh-llm'
import { Kind } from './built-in-types'

/**
 * Shape checks for the fields of built-in event data that the log relies on
 * (numbers it counts with, messages it projects, call ids it matches). They run
 * after the lossless-JSON walk, so every value here is plain JSON. Each returns
 * a sentence naming the offending path under `data`, or `undefined`.
 *
 * The checks are deliberately shallow where the session does not depend on a
 * field (chunk payloads, usage numbers, todo items): chunks are validated by
 * shape only, which keeps the hot path cheap.
 */
export function shapeProblem(kind: Kind, data: Record<string, any>): string | undefined {
  switch (kind) {
    case Kind.Meta:
      return (
        finite(data.createdAt, 'data.createdAt') ??
        positiveInteger(data.version, 'data.version') ??
        optionalString(data.cwd, 'data.cwd') ??
        optionalString(data.parentSession, 'data.parentSession') ??
        (data.seedLength === undefined ? undefined : count(data.seedLength, 'data.seedLength'))
      )
    case Kind.TurnStart:
      return positiveInteger(data.turn, 'data.turn') ?? tagged(data.trigger, 'kind', 'data.trigger')
    case Kind.TurnEnd:
      return (
        positiveInteger(data.turn, 'data.turn') ??
        tagged(data.reason, 'kind', 'data.reason') ??
        (data.reason.kind === 'blocked' ? optionalString(data.reason.reason, 'data.reason.reason') : undefined)
      )
    case Kind.StepStart:
    case Kind.StepEnd:
      return turnAndStep(data)
    case Kind.UserMessage:
    case Kind.SteeringMessage:
      return (
        messageProblem(data.message, 'user', 'data.message') ??
        envelopeProblem(data.envelope) ??
        (kind === Kind.UserMessage && data.metadata !== undefined ? object(data.metadata, 'data.metadata') : undefined)
      )
    case Kind.AssistantChunk:
      return turnAndStep(data) ?? tagged(data.chunk, 'type', 'data.chunk')
    case Kind.AssistantMessage:
      return (
        turnAndStep(data) ??
        messageProblem(data.message, 'assistant', 'data.message') ??
        integers(data.chunkSeqs, 'data.chunkSeqs') ??
        tagged(data.finishReason, 'kind', 'data.finishReason') ??
        (data.usage === undefined ? undefined : object(data.usage, 'data.usage')) ??
        (data.interrupted === undefined || data.interrupted === true ? undefined : 'data.interrupted must be true when present')
      )
    case Kind.ToolCall:
      return (
        turnAndStep(data) ??
        nonEmptyString(data.callId, 'data.callId') ??
        nonEmptyString(data.name, 'data.name') ??
        (typeof data.arguments === 'string' ? undefined : 'data.arguments must be the raw JSON text of the arguments (a string)')
      )
    case Kind.ToolResult:
      return (
        turnAndStep(data) ??
        messageProblem(data.message, 'user', 'data.message') ??
        toolResultProblem(data.message) ??
        (data.error === undefined
          ? undefined
          : (object(data.error, 'data.error') ??
            nonEmptyString(data.error.code, 'data.error.code') ??
            string(data.error.message, 'data.error.message')))
      )
    case Kind.TodoWrite:
      return array(data.todos, 'data.todos')
    case Kind.RequestHeader:
      return (
        nonEmptyString(data.provider, 'data.provider') ??
        nonEmptyString(data.model, 'data.model') ??
        optionalString(data.reasoningEffort, 'data.reasoningEffort') ??
        (data.maxTokens === undefined ? undefined : positiveInteger(data.maxTokens, 'data.maxTokens')) ??
        (data.temperature === undefined || (Number.isFinite(data.temperature) && data.temperature >= 0) ? undefined : 'data.temperature must be a number ≥ 0 when present') ??
        string(data.system, 'data.system') ??
        array(data.tools, 'data.tools') ??
        (data.reason === 'initial' || data.reason === 'change' || data.reason === 'resume'
          ? undefined
          : `data.reason must be 'initial', 'change' or 'resume'`)
      )
    case Kind.InboxEnqueue:
      return object(data.message, 'data.message') ?? nonEmptyString(data.message.id, 'data.message.id')
    case Kind.InboxDequeue:
    case Kind.InboxRequeue:
      return nonEmptyString(data.id, 'data.id')
    case Kind.InboxDiscard: {
      const problem = array(data.ids, 'data.ids')
      if (problem) return problem
      for (let i = 0; i < data.ids.length; i++) {
        const item = nonEmptyString(data.ids[i], `data.ids[${i}]`)
        if (item) return item
      }
      return undefined
    }
  }
}

function turnAndStep(data: Record<string, any>): string | undefined {
  return positiveInteger(data.turn, 'data.turn') ?? positiveInteger(data.step, 'data.step')
}

function positiveInteger(value: unknown, path: string): string | undefined {
  return Number.isInteger(value) && (value as number) >= 1 ? undefined : `${path} must be an integer ≥ 1`
}

function count(value: unknown, path: string): string | undefined {
  return Number.isInteger(value) && (value as number) >= 0 ? undefined : `${path} must be an integer ≥ 0`
}

function finite(value: unknown, path: string): string | undefined {
  return typeof value === 'number' ? undefined : `${path} must be a number`
}

function string(value: unknown, path: string): string | undefined {
  return typeof value === 'string' ? undefined : `${path} must be a string`
}

function optionalString(value: unknown, path: string): string | undefined {
  return value === undefined || typeof value === 'string' ? undefined : `${path} must be a string when present`
}

function nonEmptyString(value: unknown, path: string): string | undefined {
  return typeof value === 'string' && value.length > 0 ? undefined : `${path} must be a non-empty string`
}

function object(value: unknown, path: string): string | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? undefined : `${path} must be an object`
}

function array(value: unknown, path: string): string | undefined {
  return Array.isArray(value) ? undefined : `${path} must be an array`
}

// Paths under `path` are written only for a problem: a valid event's check builds no string.
function tagged(value: any, tag: string, path: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${path} must be an object`
  const kind = value[tag]
  return typeof kind === 'string' && kind.length > 0 ? undefined : `${path}.${tag} must be a non-empty string`
}

function integers(value: unknown, path: string): string | undefined {
  if (!Array.isArray(value)) return `${path} must be an array of seqs`
  for (let i = 0; i < value.length; i++) {
    if (!Number.isInteger(value[i])) return `${path}[${i}] must be an integer seq`
  }
  return undefined
}

/** The path of an event's message and of its parts, written once rather than on each check. */
const EVENT_MESSAGE = 'data.message'
const EVENT_MESSAGE_CONTENT = 'data.message.content'
const EVENT_MESSAGE_SOURCE = 'data.message.source'

/** A message as the session projects it: id, role, valid content blocks, a tagged source. */
export function messageProblem(value: any, role: 'user' | 'assistant' | undefined, path: string): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `${path} must be an object`
  if (typeof value.id !== 'string' || value.id.length === 0) return `${path}.id must be a non-empty string`
  if (role ? value.role !== role : value.role !== 'user' && value.role !== 'assistant') {
    return `${path}.role must be ${role ? `'${role}'` : `'user' or 'assistant'`}`
  }
  const own = path === EVENT_MESSAGE
  return (
    contentProblem(value.content, own ? EVENT_MESSAGE_CONTENT : `${path}.content`) ??
    tagged(value.source, 'kind', own ? EVENT_MESSAGE_SOURCE : `${path}.source`)
  )
}

function envelopeProblem(value: any): string | undefined {
  if (value === undefined) return undefined
  return (
    object(value, 'data.envelope') ??
    contentProblem(value.display, 'data.envelope.display') ??
    array(value.contexts, 'data.envelope.contexts')
  )
}

function toolResultProblem(message: any): string | undefined {
  const content = message.content as readonly { type: string }[]
  if (content.length !== 1 || content[0]!.type !== 'tool-result') {
    return 'data.message must hold exactly one tool-result block (a tool result is a user message with one tool-result block)'
  }
  return undefined
}
