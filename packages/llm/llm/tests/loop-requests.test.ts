import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  createUserMessage,
  forgetLoopRequests,
  isLoopRequest,
  LlmError,
  loopRequests,
  markLoopRequest,
  type LlmRequest,
  type LoopRequestMeta,
  type Message,
  type SessionId,
  watchLoopRequests,
} from '@deepseek-ai/dsh-llm'
import { mountLlm } from './helpers'

let sessions = 0
/** A fresh session id per test: the set is process-local. */
const freshSession = () => `loop-requests-${++sessions}` as SessionId

function request(messages: Message[] = []): LlmRequest {
  return { provider: 'p', model: 'm', system: 's', messages }
}

function meta(sessionId: SessionId, step: number, messageCount = 0): LoopRequestMeta {
  return { sessionId, turn: 1, step, lastSeq: step * 3, messageCount }
}

describe('loop request identity set, watched (as the invariant companion does)', () => {
  let unwatch: () => void
  beforeEach(() => {
    unwatch = watchLoopRequests()
  })
  afterEach(() => unwatch())

  it('marks exact objects and lists a session oldest first', () => {
    const session = freshSession()
    const other = freshSession()
    const a = request()
    const b = request()
    const c = request()
    markLoopRequest(a, meta(session, 1))
    markLoopRequest(c, meta(other, 1))
    markLoopRequest(b, meta(session, 2))
    expect([isLoopRequest(a), isLoopRequest(b), isLoopRequest({ ...a }), isLoopRequest(null), isLoopRequest('x')]).toEqual([true, true, false, false, false])
    expect([...loopRequests(session)]).toEqual([
      { request: a, meta: meta(session, 1) },
      { request: b, meta: meta(session, 2) },
    ])
    expect([...loopRequests(session)][0]!.request).toBe(a)
    expect([...loopRequests(freshSession())]).toEqual([])
  })

  it('never copies, freezes or mutates the live messages array; messageCount says how much was sent', () => {
    const session = freshSession()
    const history: Message[] = [createUserMessage('one')]
    const first = request(history)
    markLoopRequest(first, meta(session, 1, 1))
    history.push(createUserMessage('two'))
    const second = request(history)
    markLoopRequest(second, meta(session, 2, 2))
    const entries = [...loopRequests(session)]
    expect(entries.map((e) => e.request.messages === history)).toEqual([true, true])
    expect(entries.map((e) => e.request.messages.slice(0, e.meta.messageCount).length)).toEqual([1, 2])
    expect(Object.isFrozen(history)).toBe(false)
    expect(Object.isFrozen(first)).toBe(false)
    expect(history.length).toBe(2)
  })

  it('forgets a session', () => {
    const session = freshSession()
    const a = request()
    markLoopRequest(a, meta(session, 1))
    forgetLoopRequests(session)
    expect([isLoopRequest(a), [...loopRequests(session)]]).toEqual([false, []])
    forgetLoopRequests(session)
  })

  it('refuses a malformed meta or a request marked twice with INVALID_CONFIG, and records nothing', () => {
    const session = freshSession()
    const bad: Array<[unknown, unknown]> = [
      [null, meta(session, 1)],
      [{ provider: 'p' }, meta(session, 1)],
      [request(), null],
      [request(), { ...meta(session, 1), sessionId: '' }],
      [request(), { ...meta(session, 1), turn: 0 }],
      [request(), { ...meta(session, 1), step: 1.5 }],
      [request(), { ...meta(session, 1), lastSeq: -2 }],
      [request(), { ...meta(session, 1), messageCount: 1 }],
      [request(), { ...meta(session, 1), turn: 2 ** 53 }],
      [request(), { ...meta(session, 1), step: Number.NaN }],
      [request(), { ...meta(session, 1), step: Number.POSITIVE_INFINITY }],
      [request(), { ...meta(session, 1), lastSeq: '3' }],
      [request(), { ...meta(session, 1), turn: 2 ** 31 + 0.5 }],
    ]
    for (const [req, m] of bad) {
      let error: unknown
      try {
        markLoopRequest(req as LlmRequest, m as LoopRequestMeta)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(LlmError)
      expect((error as LlmError).code).toBe('INVALID_CONFIG')
    }
    const twice = request()
    markLoopRequest(twice, meta(session, 1))
    expect(() => markLoopRequest(twice, meta(session, 2))).toThrow(/already marked/)
    expect([...loopRequests(session)].map((e) => e.meta.step)).toEqual([1])
  })

  it('accepts integers beyond 31 bits up to the safe limit, and keeps a frozen plain copy of the meta', () => {
    const session = freshSession()
    const a = request()
    const given = { sessionId: session, turn: 2 ** 31, step: 2 ** 53 - 1, lastSeq: -1, messageCount: 0 }
    markLoopRequest(a, given)
    const [entry] = [...loopRequests(session)]
    expect(entry!.meta).toStrictEqual(given)
    expect([entry!.meta === given, Object.isFrozen(entry!.meta), Object.getPrototypeOf(entry!.meta) === Object.prototype]).toEqual([false, true, true])
  })

  it('is reachable through ctx.llm too', async () => {
    const root = await mountLlm()
    const session = freshSession()
    const a = request()
    root.llm.markLoopRequest(a, meta(session, 1))
    expect([root.llm.isLoopRequest(a), [...root.llm.loopRequests(session)].length]).toEqual([true, 1])
    root.llm.forgetLoopRequests(session)
    expect(isLoopRequest(a)).toBe(false)
  })

  it('holds requests weakly across jobs: entries marked before and after a job boundary, swept or not, list in order', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const session = freshSession()
    const kept: LlmRequest[] = []
    const markSteps = (from: number, to: number) => {
      for (let step = from; step <= to; step++) {
        const r = request()
        if (step % 10 === 0) kept.push(r)
        markLoopRequest(r, meta(session, step))
      }
    }
    markSteps(1, 40)
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    // 40 older entries (now weak, mostly collected) and 50 new ones: the sweep at 64 runs over both.
    markSteps(41, 90)
    const steps = [...loopRequests(session)].map((e) => e.meta.step)
    expect(steps).toEqual([10, 20, 30, 40, ...Array.from({ length: 50 }, (_, i) => 41 + i)])
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    expect([...loopRequests(session)].map((e) => e.request)).toEqual(kept)
    expect([...loopRequests(session)].map((e) => e.meta.step)).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90])
  })

  it('holds requests weakly: a collected request leaves the set', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const session = freshSession()
    const kept = request()
    ;(() => {
      for (let step = 1; step <= 100; step++) markLoopRequest(step === 50 ? kept : request(), meta(session, step))
    })()
    // WeakRef targets survive until the current job ends.
    await new Promise((resolve) => setImmediate(resolve))
    gc()
    expect([...loopRequests(session)]).toEqual([{ request: kept, meta: meta(session, 50) }])
  })
})

describe('loop request identity set without a watcher', () => {
  const gc = () => {
    setFlagsFromString('--expose-gc')
    ;(runInNewContext('gc') as () => void)()
  }

  it('remembers marks by identity only: isLoopRequest answers, nothing is listed, forgetting still unmarks', () => {
    const session = freshSession()
    const a = request()
    const b = request()
    markLoopRequest(a, meta(session, 1))
    markLoopRequest(b, meta(session, 2))
    expect([isLoopRequest(a), isLoopRequest(b), isLoopRequest({ ...a }), [...loopRequests(session)]]).toEqual([true, true, false, []])
    expect(() => markLoopRequest(a, meta(session, 3))).toThrow(/already marked/)
    expect(() => markLoopRequest(request(), { ...meta(session, 4), step: 0 })).toThrow(LlmError)
    forgetLoopRequests(session)
    expect([isLoopRequest(a), isLoopRequest(b)]).toEqual([false, false])
    // A forgotten request may be marked again, for a new life of the session.
    markLoopRequest(a, meta(session, 1))
    expect(isLoopRequest(a)).toBe(true)
  })

  it('checks every meta as a watched set does, reading each field once, and records nothing for a refused one', () => {
    const session = freshSession()
    const bad: unknown[] = [
      null,
      { ...meta(session, 1), sessionId: '' },
      { ...meta(session, 1), turn: 0 },
      { ...meta(session, 1), step: 1.5 },
      { ...meta(session, 1), lastSeq: -2 },
      { ...meta(session, 1), messageCount: 1 },
      { ...meta(session, 1), turn: 2 ** 53 },
      { ...meta(session, 1), step: Number.NaN },
      { ...meta(session, 1), lastSeq: '3' },
    ]
    const refused = bad.map((m) => {
      const r = request()
      try {
        markLoopRequest(r, m as LoopRequestMeta)
      } catch (error) {
        return [(error as LlmError).code, isLoopRequest(r)]
      }
      return ['accepted', isLoopRequest(r)]
    })
    expect(refused).toEqual(bad.map(() => ['INVALID_CONFIG', false]))
    const reads: string[] = []
    const counted = Object.fromEntries(
      Object.entries(meta(session, 1)).map(([key, value]) => [key, { get: () => (reads.push(key), value), enumerable: true }]),
    )
    const r = request()
    markLoopRequest(r, Object.defineProperties({}, counted) as LoopRequestMeta)
    expect([reads.sort(), isLoopRequest(r)]).toEqual([['lastSeq', 'messageCount', 'sessionId', 'step', 'turn'], true])
  })

  it('keeps nothing alive: a request marked and dropped is collectable within the job that marked it', async () => {
    const session = freshSession()
    let collected = 0
    const registry = new FinalizationRegistry<number>(() => void collected++)
    ;(() => {
      for (let step = 1; step <= 20; step++) {
        const r = request([createUserMessage(`step ${step}`)])
        registry.register(r, step)
        markLoopRequest(r, meta(session, step, 1))
      }
    })()
    // Same job: a watched set holds these directly until its setImmediate, so none would go here.
    gc()
    for (let i = 0; i < 200 && collected < 20; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(collected).toBe(20)
  })

  it('lists only what was marked while watched; the last detach empties the lists, an earlier one does not', () => {
    const session = freshSession()
    const before = request()
    markLoopRequest(before, meta(session, 1))
    const first = watchLoopRequests()
    const second = watchLoopRequests()
    const during = request()
    markLoopRequest(during, meta(session, 2))
    expect([...loopRequests(session)].map((e) => e.request)).toEqual([during])
    first()
    // Detaching is idempotent: calling it again does not detach the second watcher.
    first()
    expect([...loopRequests(session)].map((e) => e.request)).toEqual([during])
    second()
    const after = request()
    markLoopRequest(after, meta(session, 3))
    expect([[...loopRequests(session)], [before, during, after].map(isLoopRequest)]).toEqual([[], [true, true, true]])
    const third = watchLoopRequests()
    const again = request()
    markLoopRequest(again, meta(session, 4))
    expect([...loopRequests(session)].map((e) => e.meta.step)).toEqual([4])
    third()
  })
})
