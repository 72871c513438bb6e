import type { AdditionalContext } from '@deepseek-ai/dsh-agent'
import {
  createUserMessage,
  newMessageId,
  type ContentBlock,
  type JsonObject,
  type MessageId,
  type MessageSource,
  type UserMessage,
} from '@deepseek-ai/dsh-llm'
import type { PromptEnvelope, SessionEventMap } from '@deepseek-ai/dsh-session'

/** The separator line between prefixed contexts and the request (placement `prompt-prefix`). */
export const REQUEST_SEPARATOR = '## My request:'

/** The source of the message that carries admitted contexts (placement `separate`). */
export const CONTEXT_SOURCE: MessageSource = Object.freeze({ kind: 'plugin', plugin: 'context' })

/** A message the loop will enter, with the event data that goes with it. */
export interface PlacedMessage {
  readonly message: UserMessage
  readonly envelope?: PromptEnvelope
  /** An injection's admission metadata, when not empty (it has no `inbox/enqueue` to carry it). */
  readonly metadata?: JsonObject
}

/** The `user/message` data of a placed message: the message, and its envelope and metadata when it has them. */
export function userMessageData(placed: PlacedMessage): SessionEventMap['user/message'] {
  const data: SessionEventMap['user/message'] = { message: placed.message }
  if (placed.envelope) data.envelope = placed.envelope
  if (placed.metadata) data.metadata = placed.metadata
  return data
}

/**
 * Turns one admitted input into the messages a step enters (R-IN-3).
 *
 * - `separate`: when there are contexts, one message holding all of their
 *   content (source `plugin: 'context'`) immediately before the request
 *   message.
 * - `prompt-prefix`: one message of the contexts' content, the separator line
 *   and the request; its model-hidden envelope keeps the request as typed and
 *   the context labels.
 *
 * The request message takes the admitted item's id.
 */
export function placeInput(
  id: MessageId,
  content: readonly ContentBlock[],
  source: MessageSource,
  contexts: readonly AdditionalContext[],
  placement: 'separate' | 'prompt-prefix',
): PlacedMessage[] {
  if (contexts.length === 0) return [{ message: createUserMessage(content, { id, source }) }]
  const contextBlocks: ContentBlock[] = []
  for (const context of contexts) contextBlocks.push(...context.content)
  if (placement === 'separate') {
    return [
      { message: createUserMessage(contextBlocks, { id: newMessageId(), source: CONTEXT_SOURCE }) },
      { message: createUserMessage(content, { id, source }) },
    ]
  }
  const envelope: PromptEnvelope = {
    display: [...content],
    contexts: contexts.map((context) => ({ label: context.label })),
  }
  return [
    {
      message: createUserMessage([...contextBlocks, { type: 'text', text: REQUEST_SEPARATOR }, ...content], { id, source }),
      envelope,
    },
  ]
}

/** Contexts a tool deferred, as the user messages appended after its step's batch. */
export function contextMessages(contexts: readonly AdditionalContext[]): PlacedMessage[] {
  return contexts.map((context) => ({
    message: createUserMessage(context.content, { source: CONTEXT_SOURCE }),
    envelope: { display: [], contexts: [{ label: context.label }] },
  }))
}
