import { describe, expect, it } from 'vitest'
import type { StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptedModel } from '@deepseek-ai/dsh-llm-scripted'
import { deferred } from '@deepseek-ai/dsh-testkit'
import { collect, mounted, options } from './helpers'

// dsh-llm's adapter contract: a stream "must stop promptly when signal aborts" (ctx.llm reads the
// signal only between chunks, it does not race a pending pull), and it throws the signal's reason,
// as fetch does. The scripted model stands in for real adapters, so it must do both in every mode.

/** Resolves after everything already queued (promise reactions included) has run. */
const turnOfTheLoop = () => new Promise<'still waiting'>((resolve) => setImmediate(() => resolve('still waiting')))

const settled = (promise: Promise<unknown>) => promise.then((value) => ({ value }), (error: unknown) => ({ error }))

describe('the scripted model honours an abort the way a real adapter does', () => {
  it('an abort while an asynchronous responder has not answered ends the pending pull at once with the reason', async () => {
    const answer = deferred<string>()
    const model = new ScriptedModel({ respond: () => answer.promise, usage: false })
    const controller = new AbortController()
    const reason = new Error('cancelled by the test')
    const iterator = model.stream(options(undefined, { signal: controller.signal }))[Symbol.asyncIterator]()
    const pull = settled(iterator.next())
    controller.abort(reason)
    // A real provider's request is cut at once; the responder answers only after (or never).
    expect(await Promise.race([pull, turnOfTheLoop()])).toEqual({ error: reason })
    answer.resolve('too late')
    expect(await iterator.next()).toEqual({ done: true, value: undefined })
  })

  it('through ctx.llm, a cancel while the responder has not answered ends the call aborted without waiting for it', async () => {
    const asked = deferred()
    const answer = deferred<string>()
    const model = new ScriptedModel({
      respond: () => {
        asked.resolve()
        return answer.promise
      },
      usage: false,
    })
    const root = await mounted(model)
    const controller = new AbortController()
    const chunks = collect(root.llm.stream(options(undefined, { signal: controller.signal })))
    await asked.promise
    controller.abort()
    const outcome = await Promise.race([chunks, turnOfTheLoop()])
    answer.resolve('too late')
    expect(outcome).toEqual([{ type: 'finish', reason: { kind: 'aborted' } }] satisfies StreamChunk[])
  })

  it('with chunkDelayMs, an abort during the delay throws the signal reason, as without a delay', async () => {
    const model = new ScriptedModel({ script: ['one two'], chunkDelayMs: 600_000 })
    const controller = new AbortController()
    const reason = new Error('cancelled by the test')
    const iterator = model.stream(options(undefined, { signal: controller.signal }))[Symbol.asyncIterator]()
    const pull = iterator.next()
    controller.abort(reason)
    expect(await settled(pull)).toEqual({ error: reason })
  })
})

describe('a controlled call settles closed however its stream ends', () => {
  it('a stream its consumer stops before the first pull closes returned (a consumer that gives up before reading), and release() settles', async () => {
    const model = new ScriptedModel({ script: ['a'] })
    const call = model.control()
    const iterator = model.stream(options())[Symbol.asyncIterator]()
    await iterator.return!()
    expect(call.closeState).toBe('returned')
    await expect(call.closed).resolves.toBe('returned')
    await expect(call.release()).resolves.toBe('returned')
  })
})
