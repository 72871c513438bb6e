import { historyOf, type ContentBlock, type LlmRequest, type Message, type TokenUsage } from '@deepseek-ai/dsh-llm'

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
 * Counts the input characters of requests incrementally: the count of a
 * history already seen costs O(new messages), never a re-walk of the whole
 * history.
 *
 * A session hands each request an immutable snapshot of its history, a new
 * array per step; snapshots of one history answer `historyOf` with the same
 * object and are prefixes of one another, so the count is kept per history and
 * resumed at the length it reached. An array that is not a snapshot is keyed
 * on its identity (an append-only array a caller reuses is counted
 * incrementally too). A shorter array than the one counted last (another
 * prefix, or a caller that shrank its array) is counted again from the start.
 */
export class InputCounter {
  private readonly seen = new WeakMap<object, { length: number; chars: number }>()

  chars(request: LlmRequest): number {
    const messages = request.messages
    const key = historyOf(messages) ?? messages
    let entry = this.seen.get(key)
    if (entry === undefined || entry.length > messages.length) {
      entry = { length: 0, chars: 0 }
      this.seen.set(key, entry)
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
