import { describe, expect, it } from 'vitest'
import { SessionId, type Session, type SessionEventMap } from '@deepseek-ai/dsh-session'
import { assistant, openTurn, setup } from './helpers'

type Chunk = SessionEventMap['assistant/chunk']['chunk']

/** A step of turn 1: `chunks` streamed, then the anchor holding `usage` and `reason`, then `step/end`. */
function step(session: Session, step: number, chunks: readonly Chunk[], usage: object | undefined, reason: object) {
  session.append('step/start', { turn: 1, step })
  const appended = chunks.map((chunk) => session.append('assistant/chunk', { turn: 1, step, chunk }))
  session.append('assistant/message', {
    turn: 1,
    step,
    message: assistant(`answer ${step}`, `a${step}`),
    chunkSeqs: appended.map((event) => event.seq),
    ...(usage === undefined ? {} : { usage }),
    finishReason: reason,
  } as never)
  session.append('step/end', { turn: 1, step })
  return appended
}

describe('a packed usage or finish chunk keeps only its usage or reason object', () => {
  it('reads back as a new frozen chunk around the very usage and reason objects the anchor holds, with the same JSON', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const usage = { inputTokens: 12, outputTokens: 3, reasoningTokens: 1 }
    const reason = { kind: 'stop' }
    const usageChunk = { type: 'usage', usage } as Chunk
    const finishChunk = { type: 'finish', reason } as Chunk
    const [text, usageEvent, finishEvent] = step(session, 1, [{ type: 'text-delta', index: 0, text: 'hi' }, usageChunk, finishChunk], usage, reason)
    const json = [usageEvent, finishEvent].map((event) => JSON.stringify(event))
    const [readUsage, readFinish] = [session.events[usageEvent!.seq]!, session.events[finishEvent!.seq]!] as Array<{ data: { chunk: Record<string, unknown> } }>
    expect([readUsage, readFinish].map((event) => JSON.stringify(event))).toEqual(json)
    // The pack no longer holds the appended chunk objects: a read rebuilds them around the kept object.
    expect(readUsage.data.chunk).not.toBe(usageChunk)
    expect(readFinish.data.chunk).not.toBe(finishChunk)
    expect(readUsage.data.chunk.usage).toBe(usage)
    expect(readFinish.data.chunk.reason).toBe(reason)
    expect(Object.keys(readUsage.data.chunk)).toEqual(['type', 'usage'])
    expect(Object.keys(readFinish.data.chunk)).toEqual(['type', 'reason'])
    expect([readUsage.data.chunk, readFinish.data.chunk, usage, reason].every((value) => Object.isFrozen(value))).toBe(true)
    expect(session.events[text!.seq]).toEqual(text)
  })

  it('finds the right object for each of many steps, usage and finish in any order and either alone', async () => {
    const root = await setup()
    const session = root.sessions.create(SessionId('s'))
    openTurn(session, 1)
    const expected: Array<{ seq: number; json: string; inner: object }> = []
    // More object chunks than the initial column (16), so it grows; steps with a usage only before or after the finish, or none.
    for (let n = 1; n <= 45; n++) {
      const usage = { inputTokens: n, outputTokens: n * 2 }
      const reason = n % 5 === 0 ? { kind: 'length' } : { kind: 'stop', note: `step ${n}` }
      const delta: Chunk = { type: 'text-delta', index: 0, text: `d${n}` }
      const usageChunk = { type: 'usage', usage } as Chunk
      const finishChunk = { type: 'finish', reason } as Chunk
      const chunks = n % 3 === 0 ? [delta, finishChunk] : n % 3 === 1 ? [delta, usageChunk, finishChunk] : [usageChunk, delta, finishChunk]
      const appended = step(session, n, chunks, n % 3 === 0 ? undefined : usage, reason)
      for (const event of appended) {
        const chunk = (event.data as { chunk: Record<string, unknown> }).chunk
        if (chunk.type === 'usage' || chunk.type === 'finish') expected.push({ seq: event.seq, json: JSON.stringify(event), inner: (chunk.usage ?? chunk.reason) as object })
      }
    }
    const read = expected.map(({ seq }) => {
      const chunk = (session.events[seq]!.data as { chunk: Record<string, unknown> }).chunk
      return { seq, json: JSON.stringify(session.events[seq]), inner: (chunk.usage ?? chunk.reason) as object }
    })
    expect(read.map(({ seq, json }) => ({ seq, json }))).toEqual(expected.map(({ seq, json }) => ({ seq, json })))
    expect(read.every((entry, i) => entry.inner === expected[i]!.inner)).toBe(true)
    // Backwards too (the search does not depend on the order of reads).
    expect([...expected].reverse().map(({ seq }) => JSON.stringify(session.events[seq]))).toEqual([...expected].reverse().map(({ json }) => json))
  })
})
