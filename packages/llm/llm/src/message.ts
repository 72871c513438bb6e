import type { ContentBlock, MessageSource, ToolCallBlock } from './content'
import { newMessageId, type CallId, type MessageId } from './ids'
import { LlmError } from './failure'
import { deepFreeze } from './json'
import { TextRecord, ToolResultRecord, ToolSourceRecord, type Mutable } from './records'

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

/** `{ id, role, content, source }` (unfrozen), a plain object without an allocation site (see `records.ts`). */
const MessageRecord = function (this: Mutable<Message>, id: MessageId, role: 'user' | 'assistant', content: readonly ContentBlock[], source: MessageSource) {
  this.id = id
  this.role = role
  this.content = content
  this.source = source
} as unknown as new (id: MessageId, role: 'user' | 'assistant', content: readonly ContentBlock[], source: MessageSource) => Message
MessageRecord.prototype = Object.prototype

/**
 * The list `frozenTextContent` built last. One slot, not a set: a set of
 * every admitted list would itself be kept for as long as the log keeps the
 * lists (an ephemeron entry each), and the list a prompt's message is made
 * from is, in the common case, the one admitted just before.
 */
let builtText: readonly ContentBlock[] | undefined

/**
 * A fresh, frozen content list holding `content`'s blocks, each deep-frozen
 * in place (the caller may share them): `slice`, exactly as long as the
 * content. The one list not copied is the last `frozenTextContent` built
 * (made here, frozen throughout). A slice keeps the elements kind of the list
 * it copies, so a caller that hands in lists of two kinds gives messages two
 * hidden classes; the assembler's lists are packed in every tier for that reason (see
 * `StreamAssembler.result`). Not `Array.of` (always packed, but a generic
 * builtin: about five times slower than this copy) nor a push into an empty
 * list (it keeps spare capacity for the session's life: the log keeps every
 * message).
 */
function frozenContent(content: string | readonly ContentBlock[]): readonly ContentBlock[] {
  if (typeof content === 'string') return textList(content)
  // Made here and frozen throughout (see `frozenTextContent`): sharing it is sharing an immutable value. Not
  // `undefined` (nothing built yet): a missing content is refused below, as any content that is not a list.
  if (content === builtText && content !== undefined) return content
  const out: ContentBlock[] = Array.isArray(content) ? content.slice() : [...content]
  for (let i = 0; i < out.length; i++) deepFreeze(out[i])
  return Object.freeze(out)
}

/** A one-element list whose element is an object: what `oneBlock` copies (its element is replaced). */
const ONE_BLOCK: ContentBlock[] = [Object.freeze(new TextRecord(''))]

/**
 * A new list holding `block` alone, made by `slice` of a one-element list:
 * the same packed list of objects a `[block]` literal makes, without the
 * literal's allocation site. The session keeps these lists (every tool
 * result holds two); once V8 decides to allocate a literal's objects in the
 * old generation, it deoptimizes every optimized function that inlined the
 * literal (in the tool scenario's cold round: the tool batch's result loop
 * and this function), and they ran unoptimized for the rest of the round.
 */
function oneBlock(block: ContentBlock): ContentBlock[] {
  const list = ONE_BLOCK.slice()
  list[0] = block
  return list
}

/**
 * A frozen content list of one frozen text block `{ type: 'text', text }`,
 * for input admission (dsh-agent builds a string input's content with it).
 * A user message made from the list built last (`createUserMessage`) takes
 * that very list as its content instead of a copy, so the admission's record
 * and the message the log keeps share one list: the list was made here and
 * is frozen throughout, so sharing it shares an immutable value. Any other
 * list, frozen or not (an earlier one of these included), is copied as
 * before.
 */
export function frozenTextContent(text: string): readonly ContentBlock[] {
  if (typeof text !== 'string') throw new LlmError({ code: 'INVALID_CONFIG', message: `frozenTextContent: text must be a string (got ${typeof text})` })
  const list = textList(text)
  builtText = list
  return list
}

/** A frozen list of one frozen text block. */
function textList(text: string): readonly ContentBlock[] {
  return Object.freeze(oneBlock(Object.freeze(new TextRecord(text))))
}

/** A frozen message of `role`: its content copied and frozen, its source deep-frozen (in place). */
function frozenMessage(id: MessageId, role: 'user' | 'assistant', content: string | readonly ContentBlock[], source: MessageSource): Message {
  return Object.freeze(new MessageRecord(id, role, frozenContent(content), deepFreeze(source)))
}

/** A deep-frozen user message; `source` defaults to `{ kind: 'user' }`. */
export function createUserMessage(
  content: string | readonly ContentBlock[],
  options?: CreateMessageOptions & { source?: MessageSource },
): UserMessage {
  const id = options?.id ?? newMessageId()
  return frozenMessage(id, 'user', content, options?.source ?? USER_SOURCE) as UserMessage
}

/** The default source of a user message: one frozen object for all of them. */
const USER_SOURCE: MessageSource = Object.freeze({ kind: 'user' })

/** A deep-frozen assistant message; `source` is the model that produced it. */
export function createAssistantMessage(
  content: string | readonly ContentBlock[],
  options: CreateMessageOptions & { source: MessageSource },
): AssistantMessage {
  return frozenMessage(options.id ?? newMessageId(), 'assistant', content, options.source) as AssistantMessage
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
  const { callId } = options
  const inner = frozenContent(options.content)
  const block: ContentBlock = options.isError
    ? { type: 'tool-result', toolCallId: callId, content: inner, isError: true }
    : new ToolResultRecord(callId, inner)
  const content = oneBlock(Object.freeze(block))
  const message = new MessageRecord(options.id ?? newMessageId(), 'user', Object.freeze(content), Object.freeze(new ToolSourceRecord(callId)))
  return Object.freeze(message) as UserMessage
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
