import { describe, expect, it, vi } from 'vitest'

/**
 * The chunk path's feedback prime (`chunk-feedback.ts`) packs sample chunks
 * through a throwaway pack of columns of 2 and pages of 4 parts, a size no
 * session log uses: counting the packs made with it tells when it ran.
 */
describe("the session chunk path's feedback prime", () => {
  it('does not run when the package loads; the first session log runs it once, and that log holds and publishes exactly its own events', async () => {
    vi.resetModules()
    const made: number[][] = []
    vi.doMock('../src/log/chunk-pack', async (importOriginal) => {
      const original = await importOriginal<typeof import('../src/log/chunk-pack')>()
      class CountedPack extends original.ChunkPack {
        constructor(...args: ConstructorParameters<typeof original.ChunkPack>) {
          super(...args)
          made.push(args as number[])
        }
      }
      return { ...original, ChunkPack: CountedPack }
    })
    // The listener call site's prime (`primeListenerCalls`), counted the same way.
    let listenerPrimes = 0
    vi.doMock('../src/log/event-dispatch', async (importOriginal) => {
      const original = await importOriginal<typeof import('../src/log/event-dispatch')>()
      const primeListenerCalls: typeof original.primeListenerCalls = (...args) => {
        listenerPrimes++
        original.primeListenerCalls(...args)
      }
      return { ...original, primeListenerCalls }
    })
    try {
      const { Context } = await import('cordis')
      const { default: Sessions, SessionId } = await import('../src/index')
      const primes = () => made.filter((args) => args[0] === 2 && args[1] === 4).length
      expect([primes(), listenerPrimes]).toEqual([0, 0])

      const root = new Context()
      await root.plugin(Sessions)
      expect([primes(), listenerPrimes]).toEqual([0, 0])
      const heard: unknown[] = []
      const told: unknown[] = []
      root.on('session/event', (session, event) => {
        told.push(session)
        heard.push(event)
      })
      const session = root.sessions.create(SessionId('first'))
      expect([primes(), listenerPrimes]).toEqual([1, 1])
      session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
      session.append('step/start', { turn: 1, step: 1 })
      const chunks = [
        { type: 'text-delta', index: 0, text: 'Hel' },
        { type: 'text-delta', index: 0, text: 'lo' },
        { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, cacheReadTokens: 0 } },
        { type: 'finish', reason: { kind: 'stop' } },
      ] as const
      for (const chunk of chunks) session.append('assistant/chunk', { turn: 1, step: 1, chunk: structuredClone(chunk) as never })
      root.sessions.create(SessionId('second'))
      expect([primes(), listenerPrimes]).toEqual([1, 1])

      // Seq 0 is the log's own `session/meta`, written before any listener could be told.
      const events = [...session.events].slice(1)
      expect(events).toEqual(heard)
      expect(events.map((event) => [event.seq, event.type])).toEqual([
        [1, 'turn/start'],
        [2, 'step/start'],
        [3, 'assistant/chunk'],
        [4, 'assistant/chunk'],
        [5, 'assistant/chunk'],
        [6, 'assistant/chunk'],
      ])
      expect(events.slice(2).map((event) => (event.data as { chunk: unknown }).chunk)).toEqual(chunks)
      expect(JSON.parse(JSON.stringify(events))).toEqual(JSON.parse(JSON.stringify(heard)))
      // The prime's calls reached private functions only: the listener was told each event once, with its session.
      expect(told).toEqual(events.map(() => session))
    } finally {
      vi.doUnmock('../src/log/event-dispatch')
      vi.doUnmock('../src/log/chunk-pack')
      vi.resetModules()
    }
  })
})
