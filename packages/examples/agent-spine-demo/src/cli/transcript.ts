import type { AnySessionEvent, TurnEndReason } from '@deepseek-ai/dsh-session'
import { clip, textOf } from './text'
import { describeEnd } from './turn-view'

interface TurnDigest {
  turn: number
  injected: boolean
  prompt: string | undefined
  tools: string[]
  answer: string
  end: TurnEndReason | undefined
}

/**
 * The last `maxTurns` turns of a log, compactly, for `/resume`: per turn the
 * prompt (`> …`), the tools it called, the last answer (one clipped line)
 * and how it ended when that was not `done`. Reads only the tail of the log
 * (from the first of those turns). `[]` for a log without turns. With
 * `clipLast` false the last turn's answer is left out: the caller shows it
 * in full (`lastAnswer`), rendered.
 */
export function transcriptLines(events: readonly AnySessionEvent[], maxTurns = 3, clipLast = true): string[] {
  let from = events.length
  let found = 0
  let total = 0
  for (let seq = events.length - 1; seq >= 0 && found < maxTurns; seq--) {
    const event = events[seq]!
    if (event.type !== 'turn/start') continue
    // Turns are numbered from 1 in the log: the last one's number is their count.
    if (found === 0) total = event.data.turn
    from = seq
    found++
  }
  if (found === 0) return []
  const turns: TurnDigest[] = []
  for (let seq = from; seq < events.length; seq++) {
    const event = events[seq]!
    const turn = turns.at(-1)
    switch (event.type) {
      case 'turn/start':
        turns.push({ turn: event.data.turn, injected: event.data.trigger.kind === 'injection', prompt: undefined, tools: [], answer: '', end: undefined })
        break
      case 'user/message':
        if (turn && turn.prompt === undefined) turn.prompt = textOf(event.data.envelope?.display ?? event.data.message.content)
        break
      case 'tool/call':
        turn?.tools.push(event.data.name)
        break
      case 'assistant/message': {
        const text = textOf(event.data.message.content)
        if (turn && text.trim()) turn.answer = text
        break
      }
      case 'turn/end':
        if (turn) turn.end = event.data.reason
        break
      default:
        break
    }
  }
  const lines = [found < total ? `(the last ${found} of ${total} turns)` : `(${total} turn${total === 1 ? '' : 's'})`]
  for (const turn of turns) {
    lines.push(`${turn.injected ? '+' : '>'} ${clip(turn.prompt ?? '', 100)}`)
    if (turn.tools.length) lines.push(`  ▸ ${[...new Set(turn.tools)].join(', ')}`)
    if (turn.answer && (clipLast || turn !== turns.at(-1))) lines.push(`  ${clip(turn.answer, 160)}`)
    if (!turn.end) lines.push('  · still open')
    else if (turn.end.kind !== 'completed') lines.push(`  · ${describeEnd(turn.end)}`)
  }
  return lines
}

/** The text of the last answer of the log's last turn (its last `assistant/message` with text), if any. */
export function lastAnswer(events: readonly AnySessionEvent[]): string | undefined {
  for (let seq = events.length - 1; seq >= 0; seq--) {
    const event = events[seq]!
    if (event.type === 'turn/start') return undefined
    if (event.type === 'assistant/message') {
      const text = textOf(event.data.message.content)
      if (text.trim()) return text
    }
  }
  return undefined
}
