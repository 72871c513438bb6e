import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'
import { blockText } from './block-text'

/**
 * A compact, readable line per event of `session` from `seq` `from` on (default
 * 1: everything after `session/start`), for whole-log assertions
 * (`expect(trace(session)).toEqual([...])`). Consecutive `assistant/chunk`
 * events collapse into one `assistant/chunk ×N` line; events the kit does not
 * know are shown by their type.
 */
export function trace(session: Session, from = 1): string[] {
  const lines: string[] = []
  let chunks = 0
  const flushChunks = () => {
    if (chunks) lines.push(`assistant/chunk ×${chunks}`)
    chunks = 0
  }
  for (const event of session.events.slice(from) as AnySessionEvent[]) {
    if (event.type === 'assistant/chunk') {
      chunks++
      continue
    }
    flushChunks()
    lines.push(describeEvent(event))
  }
  flushChunks()
  return lines
}

function describeEvent(event: AnySessionEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `turn/start ${event.data.turn} ${event.data.trigger.kind}`
    case 'turn/end': {
      const reason = event.data.reason
      const detail =
        reason.kind === 'stopped'
          ? ` by ${reason.by}`
          : reason.kind === 'error'
            ? ` ${reason.failure.code}`
            : reason.kind === 'blocked' && reason.reason !== undefined
              ? ` ${JSON.stringify(reason.reason)}`
              : ''
      return `turn/end ${event.data.turn} ${reason.kind}${detail}`
    }
    case 'step/start':
    case 'step/end':
      return `${event.type} ${event.data.turn}.${event.data.step}`
    case 'user/message':
    case 'steering/message':
      return `${event.type} ${JSON.stringify(blockText(event.data.message.content))}`
    case 'assistant/message': {
      const data = event.data
      const reason = data.finishReason.kind === 'error' ? `error ${data.finishReason.failure.code}` : data.finishReason.kind
      return `assistant/message ${JSON.stringify(blockText(data.message.content))} ${reason}${data.interrupted ? ' interrupted' : ''}`
    }
    case 'tool/call':
      return `tool/call ${event.data.name}`
    case 'tool/result':
      return `tool/result ${event.data.error ? event.data.error.code : 'ok'} ${JSON.stringify(blockText((event.data.message.content[0] as { content: readonly ContentBlock[] }).content))}`
    case 'request/header':
      return `request/header ${event.data.reason} ${event.data.provider}/${event.data.model}${event.data.reasoningEffort ? ` ${event.data.reasoningEffort}` : ''}`
    case 'inbox/enqueue':
      return `inbox/enqueue ${event.data.message.target} ${JSON.stringify(blockText(event.data.message.content))}`
    case 'inbox/dequeue':
      return 'inbox/dequeue'
    case 'inbox/discard':
      return `inbox/discard ×${event.data.ids.length}`
    case 'inbox/requeue':
      return 'inbox/requeue'
    default:
      return event.type
  }
}
