import type { ContentBlock } from '@deepseek-ai/dsh-llm'

/** The text blocks of `content`, joined. */
export function textOf(content: readonly ContentBlock[]): string {
  let out = ''
  for (const block of content) if (block.type === 'text') out += block.text
  return out
}

/** `text` on one line (whitespace runs become one space), at most `max` characters (`…` marks a cut). */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** A result in a few words: a one-line text as it is, otherwise its size. */
export function summarize(text: string): string {
  if (text === '') return 'empty'
  const lines = text.split('\n').length
  return lines === 1 ? clip(text, 100) : `${lines} lines`
}
