import LlmService, { type StreamChunk } from '@deepseek-ai/dsh-llm'
import { createUserMessage, type GenerateOptions } from '@deepseek-ai/dsh-llm'
import { deferred, FakeProvider, openStream } from '@deepseek-ai/dsh-testkit'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { sseText, wire } from './support/wire'

// Deadlines far beyond the suite's 30 s ceiling: only the stop itself can release the connection in time.
const apiKey = 'sk-ant-stop-test-0123456789'
const patient = { requestTimeoutMs: 3_600_000, idleTimeoutMs: 3_600_000 }

let server: FakeProvider
let adapter: AnthropicAdapter
beforeEach(async () => {
  server = await FakeProvider.start()
  adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey, ...patient })
})
afterEach(async () => {
  await server.stop()
})

const call = (): GenerateOptions => ({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('Hello')] })

/**
 * Sends the message start and one text delta (one write), then stalls until the client goes away. Resolves when the
 * request's own socket closes (not `server.idle()`: after an abort Node's
 * fetch opens a spare connection that it keeps for its keep-alive time).
 */
function oneEventThenStall(): Promise<void> {
  const socketClosed = deferred()
  server.handle(async (_request, res, closed) => {
    res.socket!.once('close', () => socketClosed.resolve())
    openStream(res)
    await new Promise<void>((resolve) => res.write(sseText([wire.start(), wire.text(0), wire.textDelta(0, 'one')]), () => resolve()))
    await closed
  })
  return socketClosed.promise
}

const usage: StreamChunk = { type: 'usage', usage: { inputTokens: 25, outputTokens: 1 } }
const one: StreamChunk = { type: 'text-delta', index: 0, text: 'one' }
/** Lets the pull that was just started reach the network read. */
const settleTurns = () => new Promise<void>((resolve) => setImmediate(resolve))

async function llmStream(signal?: AbortSignal): Promise<AsyncIterator<StreamChunk>> {
  const root = new Context()
  await root.plugin(LlmService)
  root.llm.registerAdapter(['claude'], adapter)
  const prepared = await root.llm.prepareCall({ provider: 'claude', model: 'claude-test' })
  return prepared.stream({ messages: call().messages, signal })[Symbol.asyncIterator]()
}

describe('stopping a stream while a read is pending', () => {
  const streams: [string, () => Promise<AsyncIterator<StreamChunk>>][] = [
    ["the adapter's stream", async () => adapter.stream(call())[Symbol.asyncIterator]()],
    ["ctx.llm's stream", () => llmStream()],
  ]
  for (const [name, open] of streams) {
    it(`return() on ${name} while next() waits for the network closes the connection and settles both`, async () => {
      const socketClosed = oneEventThenStall()
      const stream = await open()
      const first = [await stream.next(), await stream.next()]
      const pending = stream.next()
      await settleTurns()
      const returned = stream.return!()
      await socketClosed
      expect({ first, returned: await returned, pending: await pending, after: await stream.next() }).toEqual({
        first: [{ done: false, value: usage }, { done: false, value: one }],
        returned: { done: true, value: undefined },
        pending: { done: true, value: undefined },
        after: { done: true, value: undefined },
      })
    })
  }

  it("the caller's abort while ctx.llm's next() waits ends it with aborted and closes the connection", async () => {
    const socketClosed = oneEventThenStall()
    const controller = new AbortController()
    const stream = await llmStream(controller.signal)
    const first = [await stream.next(), await stream.next()]
    const pending = stream.next()
    await settleTurns()
    controller.abort()
    const ended = await pending
    await socketClosed
    expect({ first, ended, after: await stream.next() }).toEqual({
      first: [{ done: false, value: usage }, { done: false, value: one }],
      ended: { done: false, value: { type: 'finish', reason: { kind: 'aborted' } } },
      after: { done: true, value: undefined },
    })
  })
})
