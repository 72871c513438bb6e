import type { SessionEventType } from './types'

/**
 * The event types dsh-session defines itself, as small integers so that the
 * hot path switches on a number rather than comparing strings.
 */
export enum Kind {
  Meta,
  TurnStart,
  TurnEnd,
  StepStart,
  StepEnd,
  UserMessage,
  SteeringMessage,
  AssistantChunk,
  AssistantMessage,
  ToolCall,
  ToolResult,
  TodoWrite,
  RequestHeader,
  InboxEnqueue,
  InboxDequeue,
  InboxDiscard,
  InboxRequeue,
}

/** Every type dsh-session defines itself (its `SessionEventMap` before any plugin merges), in the order of `Kind`. */
export const BUILT_IN_TYPES = [
  'session/meta',
  'turn/start',
  'turn/end',
  'step/start',
  'step/end',
  'user/message',
  'steering/message',
  'assistant/chunk',
  'assistant/message',
  'tool/call',
  'tool/result',
  'todo/write',
  'request/header',
  'inbox/enqueue',
  'inbox/dequeue',
  'inbox/discard',
  'inbox/requeue',
] as const satisfies readonly SessionEventType[]

export type BuiltInType = (typeof BUILT_IN_TYPES)[number]

/** The kind of each built-in type, by name (a prototype-less record): `builtInKind` without the call. */
export const BUILT_IN_KINDS: Readonly<Record<string, Kind | undefined>> = Object.create(null)
BUILT_IN_TYPES.forEach((type, kind) => ((BUILT_IN_KINDS as Record<string, Kind>)[type] = kind))
const kinds = BUILT_IN_KINDS

/** The kind of a built-in type, or `undefined` for any other string. */
export function builtInKind(type: string): Kind | undefined {
  return kinds[type]
}

/** Whether `type` is one of dsh-session's own event types. */
export function isBuiltInType(type: string): type is BuiltInType {
  return kinds[type] !== undefined
}
