import { describe, expect, it } from 'vitest'
import { createUserMessage, LlmError, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptError, ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { collect, mounted, options, stop } from './helpers'

const text = (t: string, index = 0): StreamChunk => ({ type: 'text-delta', index, text: t })

/** Consumes a stream in the background, recording each chunk as it is processed. */
function consume(stream: AsyncIterable<StreamChunk>, onChunk?: (chunk: StreamChunk) => void) {
  const seen: StreamChunk[] = []
  const done = (async () => {
    for await (const chunk of stream) {
      seen.push(chunk)
      onChunk?.(chunk)
    }
  })()
  return { seen, done }
}

describe('controlled calls', () => {
  it('holds the stream open until the test pushes; push settles once the consumer took the chunk', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const messages = [createUserMessage('hi')]
    const consumer = consume(root.llm.stream(options(messages, { system: 'sys' })))
    expect(await call.started).toEqual({ provider: 'scripted', model: 'demo', system: 'sys', messages })
    await call.drained()
    expect(consumer.seen).toEqual([])
    await call.push(text('a'))
    expect(consumer.seen).toEqual([text('a')])
    await call.push(text('b'), text('c'))
    expect(consumer.seen).toEqual([text('a'), text('b'), text('c')])
    expect(await call.finish()).toBe('finished')
    await consumer.done
    expect(consumer.seen).toEqual([text('a'), text('b'), text('c'), stop])
  })

  it('steps through the scripted reply one chunk at a time, then releases the rest', async () => {
    const model = new ScriptedModel({ script: [{ text: 'one two three', usage: false }] })
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    await call.step()
    expect(consumer.seen).toEqual([text('one')])
    await call.step()
    expect(consumer.seen).toEqual([text('one'), text(' two')])
    expect(call.plan?.chunks).toEqual([text('one'), text(' two'), text(' three'), stop])
    expect(await call.release()).toBe('finished')
    await consumer.done
    expect(consumer.seen).toEqual([text('one'), text(' two'), text(' three'), stop])
  })

  it('mixes manual chunks with the scripted ones', async () => {
    const model = new ScriptedModel({ script: [{ text: 'scripted', usage: false }] })
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    await call.push(text('manual '))
    await call.release()
    await consumer.done
    expect(consumer.seen).toEqual([text('manual '), text('scripted'), stop])
  })

  it('ends promptly when its signal aborts while held, and reports it', async () => {
    const model = new ScriptedModel({ script: ['never sent'] })
    const root = await mounted(model)
    const call = model.control()
    const controller = new AbortController()
    const consumer = consume(root.llm.stream(options(undefined, { signal: controller.signal })))
    await call.push(text('partial'))
    controller.abort()
    await call.aborted
    expect(await call.closed).toBe('aborted')
    await consumer.done
    expect(consumer.seen).toEqual([text('partial'), { type: 'finish', reason: { kind: 'aborted' } }])
    expect(call.signal).toBe(controller.signal)
  })

  it('an abort wins over chunks still queued', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const controller = new AbortController()
    const consumer = consume(root.llm.stream(options(undefined, { signal: controller.signal })), () => controller.abort())
    void call.push(text('a'), text('b'), text('c'))
    expect(await call.closed).toBe('aborted')
    await consumer.done
    expect(consumer.seen).toEqual([text('a'), { type: 'finish', reason: { kind: 'aborted' } }])
  })

  it('fails with a failure finish', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    const failure = { code: 'SERVER' as const, message: '503', status: 503 }
    expect(await call.fail(failure)).toBe('finished')
    await consumer.done
    expect(consumer.seen).toEqual([{ type: 'finish', reason: { kind: 'error', failure } }])
  })

  it('throws mid-stream (ctx.llm classifies it)', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    await call.push(text('a'))
    expect(await call.throw(new LlmError({ code: 'TIMEOUT', message: 'idle for 30s' }))).toBe('threw')
    await consumer.done
    expect(consumer.seen).toEqual([text('a'), { type: 'finish', reason: { kind: 'error', failure: { code: 'TIMEOUT', message: 'idle for 30s' } } }])
  })

  it('throws TRANSPORT by default', async () => {
    const model = new ScriptedModel()
    const call = model.control()
    const stream = model.stream(options())
    void call.throw()
    await expect(collect(stream)).rejects.toMatchObject({ code: 'TRANSPORT', message: 'the scripted stream was cut by the test' })
  })

  it('ends without finish', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    expect(await call.end()).toBe('ended')
    await consumer.done
    expect(consumer.seen).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'EMPTY_RESPONSE', message: 'the model stream for scripted/demo ended without producing anything' } } },
    ])
  })

  it('reports a consumer that stops early as returned', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const done = (async () => {
      for await (const _chunk of root.llm.stream(options())) break
    })()
    await call.push(text('a'))
    await done
    expect(await call.closed).toBe('returned')
  })

  it('a consumer that stops while its read waits for the test ends the stream at once: the read ends, closed returned', async () => {
    const model = new ScriptedModel()
    const call = model.control()
    const stream = model.stream(options())[Symbol.asyncIterator]()
    const first = stream.next()
    const pushed = call.push(text('a'))
    await first
    const waiting = stream.next()
    await pushed // the consumer took the chunk and asked for more: its read waits for the test
    await call.drained()
    const returned = stream.return!()
    expect({ first: await first, waiting: await waiting, returned: await returned, closed: await call.closed, after: await stream.next() }).toEqual({
      first: { done: false, value: text('a') },
      waiting: { done: true, value: undefined },
      returned: { done: true, value: undefined },
      closed: 'returned',
      after: { done: true, value: undefined },
    })
  })

  it('pushing chunks after finish: ctx.llm drops them and stops the stream', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    await call.push(stop, text('late'))
    expect(await call.closed).toBe('finished')
    await consumer.done
    expect(consumer.seen).toEqual([stop])
  })

  it('chunks pushed before the call starts flow once it does', async () => {
    const model = new ScriptedModel()
    const root = await mounted(model)
    const call = model.control()
    const pushed = call.push(text('early'))
    void call.finish()
    const chunks = await collect(root.llm.stream(options()))
    await pushed
    expect(chunks).toEqual([text('early'), stop])
  })

  it('controls the n-th call; the calls before it flow freely', async () => {
    const model = new ScriptedModel({ script: ['zero', 'one', 'two'], usage: false })
    const root = await mounted(model)
    const call = model.control(2)
    expect(await collect(root.llm.stream(options()))).toEqual([text('zero'), stop])
    expect(await collect(root.llm.stream(options()))).toEqual([text('one'), stop])
    const consumer = consume(root.llm.stream(options()))
    await call.started
    await call.drained()
    expect(consumer.seen).toEqual([])
    await call.release()
    await consumer.done
    expect(consumer.seen).toEqual([text('two'), stop])
  })

  it('control() takes the next call not started and not yet controlled', async () => {
    const model = new ScriptedModel({ script: ['a', 'b'] })
    const first = model.control()
    const second = model.control()
    expect([first.index, second.index]).toEqual([0, 1])
    void first.release()
    await collect(model.stream(options()))
    expect(model.control().index).toBe(2)
  })

  it('refuses to control a call that started or is already controlled', async () => {
    const model = new ScriptedModel({ script: ['a'] })
    await collect(model.stream(options()))
    model.control(3)
    const attempts = [() => model.control(0), () => model.control(3), () => model.control(-1), () => model.control(1.5)]
    const messages = attempts.map((attempt) => {
      try {
        attempt()
        return 'no error'
      } catch (error) {
        expect(error).toBeInstanceOf(ScriptError)
        return `${(error as ScriptError).code}: ${(error as ScriptError).message}`
      }
    })
    expect(messages).toEqual([
      'INVALID_CONTROL: model call #0 already started; take control before the call is made',
      'INVALID_CONTROL: model call #3 is already controlled',
      'INVALID_CONTROL: control(index): index must be a non-negative integer (got -1)',
      'INVALID_CONTROL: control(index): index must be a non-negative integer (got 1.5)',
    ])
  })

  it('releases a scripted throw as a throw', async () => {
    const model = new ScriptedModel({ script: [{ text: 'x', throw: 'cut' }] })
    const call = model.control()
    const stream = model.stream(options())
    const result = collect(stream).catch((error: Error) => error.message)
    expect(await call.release()).toBe('threw')
    expect(await result).toBe('cut')
  })

  it('plans a controlled call from the responder', async () => {
    const model = new ScriptedModel({ respond: async (_request, index) => ({ text: `call ${index}`, usage: false }) })
    const root = await mounted(model)
    const call = model.control()
    const consumer = consume(root.llm.stream(options()))
    await call.release()
    await consumer.done
    expect(consumer.seen).toEqual([text('call'), text(' 0'), stop])
  })

  it('does nothing once closed', async () => {
    const model = new ScriptedModel()
    const call = model.control()
    const stream = model.stream(options())
    void call.end()
    await collect(stream)
    await call.push(text('ignored'))
    await call.step()
    expect(await call.finish()).toBe('ended')
    expect(call.closeState).toBe('ended')
  })

  it('records the request of a controlled call even when recording is off', async () => {
    const model = new ScriptedModel({ record: false })
    const call = model.control()
    const messages = [createUserMessage('x')]
    const stream = model.stream(options(messages))
    void call.finish()
    await collect(stream)
    expect({ request: call.request, recorded: model.requests }).toEqual({
      request: { provider: 'scripted', model: 'demo', messages },
      recorded: [],
    })
  })
})
