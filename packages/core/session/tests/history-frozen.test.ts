import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createUserMessage, deepFreeze, historyOf, MessageId, type Message } from '@deepseek-ai/dsh-llm'
import { appendBuilt, LoadedLog, ReadOnlyHistoryError, SessionId, type AnySessionEvent, type Session, type SessionProjector } from '@deepseek-ai/dsh-session'
import { assistant, closedTurn, openTurn, setup, toolCall, toolResult } from './helpers'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /** Replaces the history derived from seqs [from, to) with one summary message, as compaction does. */
    'frozen-test/summary': { from: number; to: number; summary: string }
  }
}

const summarize: SessionProjector<'frozen-test/summary'> = (event) => ({
  messages: [createUserMessage(event.data.summary, { id: MessageId(`summary-${event.seq}`) })],
  shadow: { from: event.data.from, to: event.data.to },
})

/** The paths under `path` of every object or array that is not frozen (the history itself included). */
function unfrozen(value: unknown, path: string, out: string[] = []): string[] {
  if (value === null || typeof value !== 'object') return out
  if (!Object.isFrozen(value)) out.push(path)
  if (Array.isArray(value)) value.forEach((item, index) => unfrozen(item, `${path}[${index}]`, out))
  else for (const [key, item] of Object.entries(value)) unfrozen(item, `${path}.${key}`, out)
  return out
}

/** What R-SES-2 asks of one derivation: a frozen array of frozen messages, whatever the path. */
function frozenReport(session: Session): { length: number; unfrozen: string[] } {
  const messages = session.deriveMessages()
  return { length: messages.length, unfrozen: unfrozen(messages, 'messages') }
}

/** A turn whose step the driver writes with `appendBuilt` (the loop's path), with a tool round. */
function builtTurn(session: Session, turn: number): void {
  openTurn(session, turn)
  session.append('step/start', { turn, step: 1 })
  appendBuilt(session, 'assistant/message', { turn, step: 1, message: assistant([toolCall(`c${turn}`)], `a${turn}`), chunkSeqs: [], finishReason: { kind: 'tool-calls' } })
  appendBuilt(session, 'tool/call', { turn, step: 1, callId: `c${turn}` as never, name: 'read', arguments: '{}' })
  appendBuilt(session, 'tool/result', { turn, step: 1, message: toolResult(`c${turn}`) })
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
}

/** A store with the summary projector, and a new session `id` on it. */
async function summarizing(id: string) {
  const root = await setup()
  root.sessions.projector('frozen-test/summary', summarize)
  return { root, session: root.sessions.create(SessionId(id)) }
}

/** Turns 1 (checked) and 2 (built); the summary of both, when `summarized`, shadowing all but the meta. */
function twoTurns(session: Session, summarized: boolean): void {
  closedTurn(session, 1)
  builtTurn(session, 2)
  if (summarized) session.append('frozen-test/summary', { from: 1, to: session.events.length, summary: 'turns 1 and 2' })
}

/** Loads `events` the way a JSON-lines backend does (chunks from the bytes, the rest parsed). */
function loadedLog(events: readonly AnySessionEvent[]): LoadedLog {
  const log = new LoadedLog()
  const bytes = Buffer.from(events.map((event) => JSON.stringify(event)).join('\n') + '\n')
  let start = 0
  for (let i = bytes.indexOf(10); i >= 0; start = i + 1, i = bytes.indexOf(10, start)) {
    if (!(log.length > 0 && log.pushChunkJson(bytes, start, i))) log.push(JSON.parse(bytes.toString('utf8', start, i)))
  }
  return log
}

describe('deriveMessages() is a frozen Message[] of frozen messages on every path (R-SES-2)', () => {
  it('a fresh log, appended with checks and by a driver (appendBuilt), then growing step by step', async () => {
    const { session } = await summarizing('fresh')
    const empty = session.deriveMessages()
    closedTurn(session, 1)
    const first = session.deriveMessages()
    builtTurn(session, 2)
    const second = session.deriveMessages()
    // Incremental: every later derivation, and every earlier one kept, is frozen too.
    expect([empty, first, second].map((messages) => [messages.length, Object.isFrozen(messages), unfrozen(messages, 'messages')])).toEqual([
      [0, true, []],
      [2, true, []],
      [5, true, []],
    ])
    expect(frozenReport(session)).toEqual({ length: 5, unfrozen: [] })
  })

  it('after a projector shadows a range, and after more messages follow it', async () => {
    const { session } = await summarizing('shadowed')
    twoTurns(session, false)
    const before = session.deriveMessages()
    session.append('frozen-test/summary', { from: 1, to: session.events.length, summary: 'turns 1 and 2' })
    const shadowed = frozenReport(session)
    closedTurn(session, 3)
    expect([unfrozen(before, 'before'), shadowed, frozenReport(session)]).toEqual([[], { length: 1, unfrozen: [] }, { length: 3, unfrozen: [] }])
  })

  it('after a resume: a log replayed from parsed JSON, and from a backend loaded log (the trusted path), projectors included', async () => {
    const { root, session } = await summarizing('stored')
    twoTurns(session, true)
    closedTurn(session, 3)
    const parsed = JSON.parse(JSON.stringify(session.events)) as AnySessionEvent[]
    const replayed = root.sessions.prepare(SessionId('replayed'), { events: parsed })
    const loaded = root.sessions.prepare(SessionId('loaded'), { events: loadedLog(parsed).events })
    expect([frozenReport(replayed), frozenReport(loaded)]).toEqual([
      { length: 3, unfrozen: [] },
      { length: 3, unfrozen: [] },
    ])
    // Growing after the resume keeps it so.
    closedTurn(loaded, 4)
    expect(frozenReport(loaded)).toEqual({ length: 5, unfrozen: [] })
    expect(loaded.deriveMessages()).toEqual(session.deriveMessages().concat(loaded.deriveMessages().slice(3)))
  })

  it('once asked whether it is frozen, a snapshot reads and refuses writes exactly as before, and as the frozen array of its messages', async () => {
    const { session } = await summarizing('asked')
    twoTurns(session, false)
    const history = session.deriveMessages()
    const plain = Object.freeze([...history])
    const reads = (messages: readonly Message[]) => [
      messages.length,
      Object.keys(messages),
      JSON.stringify(messages),
      inspect(messages),
      [...messages],
      messages.slice(1, -1),
      messages.map((message) => message.role),
      [0 in messages, 5 in messages],
      Object.getOwnPropertyDescriptor(messages, 'length')?.value,
      [Array.isArray(messages), Object.getPrototypeOf(messages) === Array.prototype, messages.constructor === Array],
      Object.getPrototypeOf(messages.concat([])) === Array.prototype,
    ]
    const before = reads(history)
    expect([Object.isFrozen(history), Object.isSealed(history), Object.isExtensible(history)]).toEqual([true, true, false])
    // dsh-llm's deepFreeze stops at a frozen value: a request holding a snapshot can be deep-frozen.
    expect(deepFreeze({ messages: history }).messages).toBe(history)
    expect(reads(history)).toEqual(before)
    expect(reads(history)).toEqual(reads(plain))
    expect(history).toEqual(plain)
    const writes = [() => (history as Message[]).push(plain[0]!), () => ((history as Message[])[0] = plain[1]!), () => ((history as Message[]).length = 0)]
    for (const write of writes) expect(write).toThrow(ReadOnlyHistoryError)
    // Freezing it again succeeds and changes nothing, as on a frozen array.
    expect(Object.freeze(history)).toBe(history)
    expect(history).toEqual(plain)
    // The session goes on: the next derivation is a new snapshot of the same history, unaffected.
    closedTurn(session, 3)
    const next = session.deriveMessages()
    expect([next.length, historyOf(next) === historyOf(history), next.slice(0, 5)]).toEqual([7, true, [...plain]])
  })
})
