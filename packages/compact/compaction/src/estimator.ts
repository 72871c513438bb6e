import type { ContentBlock, Message, ToolSchema } from '@deepseek-ai/dsh-llm'
import type { TokenEstimator } from './types'

/** Tokens a provider adds per message for its role and framing, whatever the content. */
const MESSAGE_OVERHEAD = 4
/** What an image costs, roughly, at the providers' usual resolutions. */
const IMAGE_TOKENS = 1_000

/** Characters / 4, rounded up: the default estimate of a text's tokens (R-CMP-1). */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4)
}

/** The characters a block sends (an image counts as `IMAGE_TOKENS × 4`). */
export function blockCharacters(block: ContentBlock): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return block.text.length
    case 'tool-call':
      return block.name.length + block.arguments.length + block.id.length
    case 'tool-result': {
      let total = block.toolCallId.length
      for (const inner of block.content) total += blockCharacters(inner)
      return total
    }
    case 'image':
      return IMAGE_TOKENS * 4
    default:
      return JSON.stringify(block).length
  }
}

/** The characters of a message's content. */
export function messageCharacters(message: Message): number {
  let total = 0
  const content = message.content
  for (let i = 0; i < content.length; i++) total += blockCharacters(content[i]!)
  return total
}

/**
 * The default estimator: characters / 4 plus a small per-message overhead;
 * the header counts the system text and the tools' JSON. It never sees a
 * tokenizer, which is why the meter calibrates it against the usage the
 * provider reports (see `TokenMeter`).
 */
export const defaultEstimator: TokenEstimator = Object.freeze({
  message(message: Message): number {
    return Math.ceil(messageCharacters(message) / 4) + MESSAGE_OVERHEAD
  },
  header(system: string, tools: readonly ToolSchema[]): number {
    return estimateTextTokens(system) + (tools.length ? estimateTextTokens(JSON.stringify(tools)) : 0)
  },
})
