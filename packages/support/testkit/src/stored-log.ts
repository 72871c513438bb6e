import { readFileSync } from 'node:fs'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { blockText } from './block-text'

/** The events of a JSONL session file (dsh-session-jsonl's format), one per non-empty line. */
export function readJsonlLog(file: string): AnySessionEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AnySessionEvent)
}

/** Log-only bookkeeping that a stored-log trace leaves out. */
const skipped = new Set(['session/meta', 'request/header', 'inbox/enqueue', 'inbox/dequeue', 'inbox/discard', 'inbox/requeue'])

/**
 * A compact line per event of a log read back from storage (a crashed or
 * finished process's session file), for whole-log assertions across a
 * process boundary. Coarser than `trace()`: headers and inbox bookkeeping are
 * left out, an assistant message is shown by its finish and the tools it
 * called (`assistant/message tool-calls calls read,grep`), a tool result by
 * its outcome; consecutive `assistant/chunk`s collapse into
 * `assistant/chunk ×N`, also across left-out events.
 */
export function traceStoredLog(events: readonly AnySessionEvent[]): string[] {
  const lines: string[] = []
  let chunks = 0
  const flush = () => {
    if (chunks) lines.push(`assistant/chunk ×${chunks}`)
    chunks = 0
  }
  for (const event of events) {
    if (event.type === 'assistant/chunk') {
      chunks++
      continue
    }
    if (skipped.has(event.type)) continue
    flush()
    lines.push(describeStored(event))
  }
  flush()
  return lines
}

function describeStored(event: AnySessionEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `turn/start ${event.data.turn} ${event.data.trigger.kind}`
    case 'turn/end': {
      const reason = event.data.reason
      return `turn/end ${event.data.turn} ${reason.kind}${reason.kind === 'stopped' ? ` by ${reason.by}` : reason.kind === 'error' ? ` ${reason.failure.code}` : ''}`
    }
    case 'step/start':
    case 'step/end':
      return `${event.type} ${event.data.turn}.${event.data.step}`
    case 'user/message':
    case 'steering/message':
      return `${event.type} ${JSON.stringify(blockText(event.data.message.content))}`
    case 'assistant/message': {
      const data = event.data
      const calls = data.message.content.filter((block) => block.type === 'tool-call').map((block) => (block as { name: string }).name)
      const reason = data.finishReason.kind === 'error' ? `error ${data.finishReason.failure.code}` : data.finishReason.kind
      return `assistant/message ${reason}${calls.length ? ` calls ${calls.join(',')}` : ''}${data.interrupted ? ' interrupted' : ''}`
    }
    case 'tool/call':
      return `tool/call ${event.data.name}`
    case 'tool/result':
      return `tool/result ${event.data.error ? event.data.error.code : 'ok'}`
    default:
      return event.type
  }
}
