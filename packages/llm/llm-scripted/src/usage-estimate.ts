import type { ContentBlock, LlmRequest, Message, TokenUsage } from '@deepseek-ai/dsh-llm'

/** About four characters a token: enough for a demo's cost line and for tests to see usage move. */
export const tokensOf = (chars: number): number => Math.ceil(chars / 4)

function blockChars(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return block.text.length
    case 'tool-call':
      return block.name.length + block.arguments.length
    case 'tool-result': {
      let chars = 0
      for (const inner of block.content) chars += blockChars(inner)
      return chars
    }
    case 'image':
      return 1000
    default:
      return 0
  }
}

function messageChars(message: Message): number {
  let chars = 0
  for (const block of message.content) chars += blockChars(block)
  return chars
}

/**
 * Counts the input characters of requests incrementally. A session's
 * history array only grows, so the count of an array already seen costs
 * O(new messages), never a re-walk of the whole history.
 */
export class InputCounter {
  private readonly seen = new WeakMap<readonly Message[], { length: number; chars: number }>()

  chars(request: LlmRequest): number {
    const messages = request.messages
    let entry = this.seen.get(messages)
    if (entry === undefined || entry.length > messages.length) {
      entry = { length: 0, chars: 0 }
      this.seen.set(messages, entry)
    }
    for (let i = entry.length; i < messages.length; i++) entry.chars += messageChars(messages[i]!)
    entry.length = messages.length
    return entry.chars + (request.system?.length ?? 0)
  }
}

/** The estimated usage of one call: counts do not overlap (reasoning is not part of output). */
export function estimateUsage(inputChars: number, outputChars: number, reasoningChars: number): TokenUsage {
  const usage: TokenUsage = { inputTokens: tokensOf(inputChars), outputTokens: tokensOf(outputChars) }
  if (reasoningChars > 0) usage.reasoningTokens = tokensOf(reasoningChars)
  return usage
}
