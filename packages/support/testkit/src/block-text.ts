import type { ContentBlock } from '@deepseek-ai/dsh-llm'

/** The text of some content blocks, with every non-text block shown as `[type]`. */
export function blockText(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')
}
