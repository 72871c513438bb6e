import { describe, expect, it } from 'vitest'
import type { PreparedCall } from '@deepseek-ai/dsh-llm'
import { abortedNow } from '../src/abort-read'
import { collect, fakeAdapter, mountLlm, stop } from './helpers'

describe('abortedNow: signal.aborted, exactly', () => {
  it('answers what signal.aborted answers for Node signals, shadowed ones and signal-like objects', () => {
    const live = new AbortController()
    const aborted = new AbortController()
    aborted.abort()
    const shadowed = new AbortController().signal
    Object.defineProperty(shadowed, 'aborted', { value: true })
    class Sub extends AbortSignal {}
    const subclassed = Object.setPrototypeOf(new AbortController().signal, Sub.prototype) as AbortSignal
    Object.defineProperty(Sub.prototype, 'aborted', { get: () => true })
    // A proxy of a live Node signal whose trap answers `aborted` itself: Node's getter would read the target's slot.
    const trapped = new Proxy(new AbortController().signal, { get: (target, key) => (key === 'aborted' ? true : Reflect.get(target, key)) })
    const cases = [live.signal, aborted.signal, shadowed, subclassed, trapped, { aborted: 1 }, { aborted: 0 }, { aborted: 'yes' }] as unknown as AbortSignal[]
    expect(cases.map(abortedNow)).toEqual(cases.map((signal) => Boolean(signal.aborted)))
    expect(cases.map(abortedNow)).toEqual([false, true, true, true, true, true, false, true])
  })

  it('is what a model call checks before it is prepared and before its adapter is opened', async () => {
    const root = await mountLlm()
    const adapter = fakeAdapter([stop])
    root.llm.registerAdapter(['p'], adapter)
    // A signal whose own `aborted` says so, though Node's getter would not: the property decides.
    const shadowed = new AbortController().signal
    Object.defineProperty(shadowed, 'aborted', { value: true })
    expect(() => root.llm.prepareCallNow({ provider: 'p', model: 'm' }, shadowed)).toThrow(expect.objectContaining({ code: 'ABORTED' }))
    const call = root.llm.prepareCallNow({ provider: 'p', model: 'm' }) as PreparedCall
    const chunks = await collect(call.stream({ messages: [], signal: shadowed }))
    expect([chunks, adapter.calls.length]).toEqual([[{ type: 'finish', reason: { kind: 'aborted' } }], 0])
  })
})
