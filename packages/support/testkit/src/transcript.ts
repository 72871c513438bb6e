import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import { blockText } from './block-text'

/**
 * The text of every message in a recorded request, one line per message,
 * role-prefixed (`user: hi`, `assistant: call echo({"text":"x"})`,
 * `user: result echo: x`), for whole-request assertions.
 */
export function transcript(messages: readonly { role: string; content: readonly ContentBlock[] }[]): string[] {
  return messages.map((message) => {
    const parts = message.content.map((block) => {
      if (block.type === 'text') return block.text
      if (block.type === 'tool-call') return `call ${block.name}(${block.arguments})`
      if (block.type === 'tool-result') return `result ${blockText(block.content)}`
      return `[${block.type}]`
    })
    return `${message.role}: ${parts.join(' | ')}`
  })
}
