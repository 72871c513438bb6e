import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { spine } from '@deepseek-ai/dsh-testkit'
import type { AnySessionEvent, Session, SessionEvent } from '@deepseek-ai/dsh-session'
import { ChunkSeqs } from '../src/chunk-seqs'

const chunkSeqsOf = (events: readonly AnySessionEvent[]) => events.filter((event) => event.type === 'assistant/chunk').map((event) => event.seq)
/** Appends the test's own registered type (not in `SessionEventMap`). */
const appendNote = (session: Session, after: number) => (session.append as (type: string, data: object) => unknown)('test/note', { after })
const anchorOf = (events: readonly AnySessionEvent[]) => events.find((event) => event.type === 'assistant/message') as SessionEvent<'assistant/message'>

describe("the anchor's chunkSeqs", () => {
  it('lists the seqs of the step\'s chunks, in order, when nothing else was logged between them', async () => {
    const { agent } = await spine({ model: { script: ['Hello there, how are you'] } })
    const a = await agent()
    a.followup('hi')
    await a.whenIdle()
    const events = a.session.events
    const seqs = chunkSeqsOf(events)
    expect(seqs.length).toBeGreaterThan(2)
    expect(anchorOf(events).data.chunkSeqs).toEqual(seqs)
  })

  it('lists them with the gaps when a listener logged its own events between chunks', async () => {
    const { agent, root } = await spine({ model: { script: ['Hello there, how are you'] } })
    root.sessions.registerType('test/note')
    let chunks = 0
    root.on('session/event', (session, event) => {
      // After the second chunk and every third one from then on: gaps of one in the chunks' seqs.
      if (event.type === 'assistant/chunk' && ++chunks % 3 === 2) appendNote(session, event.seq)
    })
    const a = await agent()
    a.followup('hi')
    await a.whenIdle()
    const events = a.session.events
    const seqs = chunkSeqsOf(events)
    expect(events.filter((event) => event.type === 'test/note').length).toBeGreaterThan(0)
    expect(seqs.some((seq, i) => i > 0 && seq !== seqs[i - 1]! + 1)).toBe(true)
    expect(anchorOf(events).data.chunkSeqs).toEqual(seqs)
  })
})

describe('ChunkSeqs', () => {
  it('gives back exactly the increasing seqs pushed, runs and gaps alike, as a new array each time', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 60 }), fc.nat(1000), (steps, start) => {
        const seqs: number[] = []
        let seq = start
        for (const step of steps) seqs.push((seq += step))
        const kept = new ChunkSeqs()
        for (const s of seqs) kept.push(s)
        const first = kept.toArray()
        expect(first).toEqual(seqs)
        expect(kept.length).toBe(seqs.length)
        expect(kept.toArray()).not.toBe(first)
        // Frozen: the log, which keeps it, does not walk it to freeze it.
        expect(Object.isFrozen(first)).toBe(true)
      }),
    )
  })
})
