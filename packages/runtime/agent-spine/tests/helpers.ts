import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix = 'dsh-spine-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** The events of a JSONL session file, one per non-empty line. */
export function readEvents(file: string): AnySessionEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AnySessionEvent)
}

function textOf(content: readonly { type: string; text?: string }[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')
}

/** Log-only bookkeeping that whole-log assertions leave out. */
const skipped = new Set(['session/meta', 'request/header', 'inbox/enqueue', 'inbox/dequeue', 'inbox/discard', 'inbox/requeue'])

/**
 * A compact line per event, for whole-log assertions: consecutive
 * `assistant/chunk`s collapse into `assistant/chunk ×N` (also across left-out
 * events), inbox bookkeeping and headers are left out.
 */
export function trace(events: readonly AnySessionEvent[]): string[] {
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
    switch (event.type) {
      case 'turn/start':
        lines.push(`turn/start ${event.data.turn} ${event.data.trigger.kind}`)
        break
      case 'turn/end': {
        const reason = event.data.reason
        lines.push(`turn/end ${event.data.turn} ${reason.kind}${reason.kind === 'stopped' ? ` by ${reason.by}` : reason.kind === 'error' ? ` ${reason.failure.code}` : ''}`)
        break
      }
      case 'step/start':
      case 'step/end':
        lines.push(`${event.type} ${event.data.turn}.${event.data.step}`)
        break
      case 'user/message':
      case 'steering/message':
        lines.push(`${event.type} ${JSON.stringify(textOf(event.data.message.content))}`)
        break
      case 'assistant/message': {
        const data = event.data
        const calls = data.message.content.filter((block) => block.type === 'tool-call').map((block) => (block as { name: string }).name)
        const reason = data.finishReason.kind === 'error' ? `error ${data.finishReason.failure.code}` : data.finishReason.kind
        lines.push(`assistant/message ${reason}${calls.length ? ` calls ${calls.join(',')}` : ''}${data.interrupted ? ' interrupted' : ''}`)
        break
      }
      case 'tool/call':
        lines.push(`tool/call ${event.data.name}`)
        break
      case 'tool/result':
        lines.push(`tool/result ${event.data.error ? event.data.error.code : 'ok'}`)
        break
      default:
        lines.push(event.type)
    }
  }
  flush()
  return lines
}
