import { CallId, type StreamChunk } from '@deepseek-ai/dsh-llm'
import type { AnswerFinish, ProviderEvent } from './behaviour'

/**
 * The reference translation of provider events into the stream protocol
 * (R-LLM-6): each block gets an index in order of first appearance (all
 * reasoning one block, all text one block, one block per tool call), one chunk
 * per event, the first delta of a tool call with its id and name, usage
 * snapshots as given, then the `finish` (none when `finish` is omitted).
 *
 * The suite derives its expectations from it (`assemble(idealChunks(…))`); a
 * driver for an in-memory adapter (the scripted model) can stream it as is.
 */
export function idealChunks(events: readonly ProviderEvent[], finish?: AnswerFinish): StreamChunk[] {
  const indices = new Map<string, number>()
  const indexOf = (key: string) => {
    let index = indices.get(key)
    if (index === undefined) indices.set(key, (index = indices.size))
    return index
  }
  const chunks: StreamChunk[] = []
  for (const event of events) {
    switch (event.type) {
      case 'reasoning':
        chunks.push({ type: 'reasoning-delta', index: indexOf('reasoning'), text: event.text })
        break
      case 'text':
        chunks.push({ type: 'text-delta', index: indexOf('text'), text: event.text })
        break
      case 'tool-call': {
        const chunk: StreamChunk = { type: 'tool-call-delta', index: indexOf(`call ${event.call}`), argumentsDelta: event.arguments }
        if (event.id !== undefined) chunk.id = CallId(event.id)
        if (event.name !== undefined) chunk.name = event.name
        chunks.push(chunk)
        break
      }
      case 'usage':
        chunks.push({ type: 'usage', usage: event.usage })
        break
    }
  }
  if (finish !== undefined) chunks.push({ type: 'finish', reason: { kind: finish } })
  return chunks
}
