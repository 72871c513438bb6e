import { describe, expect, it } from 'vitest'
import { LlmError, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { ProtocolStream } from '../src/protocol-stream'
import { deferred, hello, stop } from './helpers'

const world: StreamChunk = { type: 'text-delta', index: 0, text: ' world' }
const done = { done: true, value: undefined }

function errorFinish(code: string, message: string): StreamChunk {
  return { type: 'finish', reason: { kind: 'error', failure: { code, message } as never } }
}

type Answer = IteratorResult<StreamChunk> | Promise<IteratorResult<StreamChunk>>

/** A stream over a source whose `next()` answers are given in order: a value, or a function run at the pull (it may throw). */
function streamOf(answers: (Answer | (() => Answer))[], classify = true) {
  const source = { returned: 0 }
  let at = 0
  const iterator = {
    next: (): Answer => {
      const answer = answers[at++]
      if (answer === undefined) return { done: true, value: undefined }
      return typeof answer === 'function' ? answer() : answer
    },
    return: () => {
      source.returned++
      return Promise.resolve({ done: true as const, value: undefined })
    },
  }
  const iterable = { [Symbol.asyncIterator]: () => iterator as unknown as AsyncIterator<StreamChunk> }
  const stream = new ProtocolStream({ route: 'p/m', signal: undefined, open: () => iterable }, classify)
  return { stream, source }
}

const transport = (): never => {
  throw new LlmError({ code: 'TRANSPORT', message: 'socket closed' })
}

describe('ProtocolStream.next() with chunks at hand (plain results of the source)', () => {
  it('answers a chunk at hand with a promise already settled: its handlers run in the next microtask', async () => {
    const { stream } = streamOf([{ done: false, value: hello }, { done: false, value: stop }])
    await stream.next() // opens the source and answers its first chunk
    const order: string[] = []
    void stream.next().then((result) => order.push(`answer ${result.done ? 'done' : result.value.type}`))
    await Promise.resolve()
    order.push('one microtask later')
    expect(order).toEqual(['answer finish', 'one microtask later'])
  })

  it('answers calls made without waiting in call order: a chunk at hand never overtakes an earlier call that waits', async () => {
    const first = deferred<IteratorResult<StreamChunk>>()
    const { stream, source } = streamOf([first.promise, { done: false, value: world }, { done: false, value: stop }, { done: false, value: hello }])
    const opened = stream.next()
    await Promise.resolve()
    const answers = [opened, stream.next(), stream.next(), stream.next()]
    first.resolve({ done: false, value: hello })
    expect(await Promise.all(answers)).toEqual([
      { done: false, value: hello },
      { done: false, value: world },
      { done: false, value: stop },
      done,
    ])
    expect(await stream.next()).toEqual(done)
    expect(source.returned).toBe(1)
  })

  it('answers a throw of the source after the earlier calls that wait', async () => {
    const first = deferred<IteratorResult<StreamChunk>>()
    const { stream, source } = streamOf([first.promise, transport])
    const opened = stream.next()
    await Promise.resolve()
    const answers = [opened, stream.next()]
    first.resolve({ done: false, value: hello })
    expect(await Promise.all(answers)).toEqual([{ done: false, value: hello }, { done: false, value: errorFinish('TRANSPORT', 'socket closed') }])
    expect(await stream.next()).toEqual(done)
    expect(source.returned).toBe(0)
  })

  it('answers a chunk at hand and then a throw, both asked for without waiting, in that order', async () => {
    const { stream } = streamOf([{ done: false, value: hello }, { done: false, value: world }, transport])
    await stream.next()
    const answers = [stream.next(), stream.next()]
    expect(await Promise.all(answers)).toEqual([{ done: false, value: world }, { done: false, value: errorFinish('TRANSPORT', 'socket closed') }])
  })

  it('without classification (a middleware stream), rejects the call the throw answers, after the earlier ones', async () => {
    const first = deferred<IteratorResult<StreamChunk>>()
    const thrown = new Error('middleware broke')
    const { stream } = streamOf(
      [
        first.promise,
        { done: false, value: world },
        () => {
          throw thrown
        },
      ],
      false,
    )
    const opened = stream.next()
    await Promise.resolve()
    const answers = [opened, stream.next(), stream.next()].map((answer) => answer.then((result) => ({ result }), (error: unknown) => ({ error })))
    first.resolve({ done: false, value: hello })
    expect(await Promise.all(answers)).toEqual([{ result: { done: false, value: hello } }, { result: { done: false, value: world } }, { error: thrown }])
  })
})
