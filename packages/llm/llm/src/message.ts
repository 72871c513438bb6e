import type { ContentBlock, MessageSource, ToolCallBlock } from './content'
import { newMessageId, type CallId, type MessageId } from './ids'
import { deepFreeze } from './json'

/**
 * One message of a conversation. Messages that cross the session boundary are
 * plain JSON and deep-frozen: readers never get a mutable alias.
 */
export interface Message {
  readonly id: MessageId
  readonly role: 'user' | 'assistant'
  readonly content: readonly ContentBlock[]
  /** Model-hidden provenance; adapters never send it. */
  readonly source: MessageSource
}

/** A user-role message. A tool result is a user-role message holding one `tool-result` block. */
export interface UserMessage extends Message {
  readonly role: 'user'
}

/** An assistant-role message: what a model produced in one step. */
export interface AssistantMessage extends Message {
  readonly role: 'assistant'
}

export interface CreateMessageOptions {
  /** Defaults to a fresh `newMessageId()`. */
  id?: MessageId
}

function blocks(content: string | readonly ContentBlock[]): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  // `slice`, not a spread: a spread runs the iterator protocol, a real cost before V8 optimizes this (every step).
  return Array.isArray(content) ? content.slice() : [...content]
}

/**
 * A message deep-frozen without walking what is known: the message object
 * and its content array are fresh, so only the blocks (which the caller may
 * share) and the source are walked. Messages are made on every step.
 */
function frozenMessage<M extends Message>(message: M): M {
  const content = message.content as ContentBlock[]
  for (let i = 0; i < content.length; i++) deepFreeze(content[i])
  Object.freeze(content)
  deepFreeze(message.source)
  return Object.freeze(message)
}

/** A deep-frozen user message; `source` defaults to `{ kind: 'user' }`. */
export function createUserMessage(
  content: string | readonly ContentBlock[],
  options: CreateMessageOptions & { source?: MessageSource } = {},
): UserMessage {
  return frozenMessage<UserMessage>({
    id: options.id ?? newMessageId(),
    role: 'user',
    content: blocks(content),
    source: options.source ?? { kind: 'user' },
  })
}

/** A deep-frozen assistant message; `source` is the model that produced it. */
export function createAssistantMessage(
  content: string | readonly ContentBlock[],
  options: CreateMessageOptions & { source: MessageSource },
): AssistantMessage {
  return frozenMessage<AssistantMessage>({
    id: options.id ?? newMessageId(),
    role: 'assistant',
    content: blocks(content),
    source: options.source,
  })
}

/**
 * A deep-frozen tool result: a user-role message holding one `tool-result`
 * block for `callId`, with source `{ kind: 'tool', callId }`.
 *
 * Built part by part and frozen as it is built (no object spread, no walk of
 * the parts made here): every tool call makes one, and the cold round runs
 * this unoptimized, where a spread and a generic deep freeze are real work.
 */
export function createToolResultMessage(options: {
  callId: CallId
  content: string | readonly ContentBlock[]
  isError?: boolean
  id?: MessageId
}): UserMessage {
  const { callId, content } = options
  let inner: ContentBlock[]
  if (typeof content === 'string') {
    inner = [Object.freeze({ type: 'text', text: content })]
  } else {
    // A copy: the caller keeps its array; the blocks (which it may share) are frozen in place.
    inner = content.slice()
    for (let i = 0; i < inner.length; i++) deepFreeze(inner[i])
  }
  const block: ContentBlock = options.isError
    ? { type: 'tool-result', toolCallId: callId, content: Object.freeze(inner), isError: true }
    : { type: 'tool-result', toolCallId: callId, content: Object.freeze(inner) }
  return Object.freeze({
    id: options.id ?? newMessageId(),
    role: 'user',
    content: Object.freeze([Object.freeze(block)]),
    source: Object.freeze({ kind: 'tool', callId }),
  })
}

/** The tool calls of a message, in model order. */
export function toolCallsOf(message: Message): ToolCallBlock[] {
  // Indexed, not for…of: an iterator per call in the cold round's unoptimized code (once per step).
  const calls: ToolCallBlock[] = []
  const { content } = message
  for (let i = 0; i < content.length; i++) {
    const block = content[i]!
    if (block.type === 'tool-call') calls.push(block)
  }
  return calls
}

/** The concatenated text blocks of a message (reasoning excluded). */
export function textOf(message: Message): string {
  let out = ''
  for (const block of message.content) if (block.type === 'text') out += block.text
  return out
}
