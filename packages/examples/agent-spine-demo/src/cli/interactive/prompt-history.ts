import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { textOf } from '../text'

/**
 * The prompts a person typed in a session (prompts and steering, as typed:
 * the envelope's display text when a mention attached files), oldest first,
 * to seed the line editor's history when a session is resumed.
 */
export function promptHistory(events: readonly AnySessionEvent[]): string[] {
  const out: string[] = []
  for (const event of events) {
    if (event.type !== 'user/message' && event.type !== 'steering/message') continue
    const { message, envelope } = event.data
    if (message.source.kind !== 'user') continue
    const text = textOf(envelope?.display ?? message.content).trim()
    if (text && out.at(-1) !== text) out.push(text)
  }
  return out
}
