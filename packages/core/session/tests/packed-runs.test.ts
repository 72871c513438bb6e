import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LoadedLog, SessionId, type AnySessionEvent, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { assistant, openTurn, setup } from './helpers'

type Chunk = SessionEventMap['assistant/chunk']['chunk']

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    'runs-test/note': { seen: number }
  }
}

/** What a listener does when it receives a chunk: nothing, a note (an object entry between two chunks), or a chunk of its own. */
type Reaction = 'none' | 'note' | 'chunk'

interface Streamed {
  /** packed: a text delta; odd: a block index beyond the pack's 16 bits (stays an object); usage: a kept object. */
  readonly kind: 'packed' | 'odd' | 'usage'
  readonly text: string
  readonly reaction: Reaction
}

const streamed: fc.Arbitrary<Streamed> = fc.record({
  kind: fc.constantFrom('packed', 'packed', 'packed', 'odd', 'usage'),
  text: fc.string({ maxLength: 6 }),
  reaction: fc.constantFrom<Reaction>('none', 'none', 'none', 'note', 'chunk'),
})

function chunkOf(item: Streamed): Chunk {
  if (item.kind === 'usage') return { type: 'usage', usage: { inputTokens: item.text.length, outputTokens: 1 } }
  return { type: 'text-delta', index: item.kind === 'odd' ? 70_000 : 0, text: item.text }
}

describe('a log whose chunks are packed in runs reads back what every listener received', () => {
  it('property: random steps, with listeners appending between chunks, read back the same events and JSON, resumed too', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(streamed, { maxLength: 12 }), { minLength: 1, maxLength: 4 }), async (steps) => {
        const root = await setup()
        const session = root.sessions.create(SessionId('s'))
        root.sessions.registerType('runs-test/note')
        openTurn(session, 1)
        const heard: AnySessionEvent[] = []
        let reactions: readonly Reaction[] = []
        let reacting = 0
        root.on('session/event', (target, event) => {
          heard.push(event)
          if (event.type !== 'assistant/chunk' || target !== session) return
          const reaction = reactions[reacting++]
          const { turn, step } = event.data
          if (reaction === 'note') target.append('runs-test/note', { seen: event.seq })
          else if (reaction === 'chunk') target.append('assistant/chunk', { turn, step, chunk: { type: 'text-delta', index: 0, text: `echo ${event.seq}` } })
        })
        for (let s = 0; s < steps.length; s++) {
          const step = s + 1
          const items = steps[s]!
          session.append('step/start', { turn: 1, step })
          reactions = []
          reacting = 0
          const order: Reaction[] = []
          for (const item of items) {
            order.push(item.reaction)
            reactions = order
            session.append('assistant/chunk', { turn: 1, step, chunk: chunkOf(item) })
          }
          const chunkSeqs = session.events.flatMap((event) => (event.type === 'assistant/chunk' && event.data.step === step ? [event.seq] : []))
          session.append('assistant/message', { turn: 1, step, message: assistant(`answer ${step}`, `a${step}`), chunkSeqs, finishReason: { kind: 'stop' } })
          session.append('step/end', { turn: 1, step })
        }
        session.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
        const mine = heard.filter((event) => event.seq >= 3)
        const json = JSON.stringify(session.events)
        // Dense seqs, and each entry equal (same JSON) to the object every listener received.
        expect(session.events.map((event) => event.seq)).toEqual(session.events.map((_event, seq) => seq))
        expect(session.events.slice(3).map((event) => JSON.stringify(event))).toEqual(mine.map((event) => JSON.stringify(event)))
        // Events that are not packed keep their identity.
        for (const event of mine) if (event.type !== 'assistant/chunk') expect(session.events[event.seq]).toBe(event)
        // A resume from what a backend reads back gives the same log.
        const log = new LoadedLog()
        for (const event of JSON.parse(json) as AnySessionEvent[]) log.push(event)
        const resumed = root.sessions.prepare(SessionId('resumed'), { events: log.events })
        expect(JSON.stringify(resumed.events)).toBe(json)
        expect(JSON.stringify(log.events)).toBe(json)
      }),
      { numRuns: 60 },
    )
  })
})
