import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { createUserMessage, type GenerateOptions, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { describe, expect, it, vi } from 'vitest'
import { OpenAiAdapter } from '../src'
import { call, useFakeProvider } from './support/fixture'
import { collect, errorFinish } from './support/collect'
import { FakeProvider, openAiChunk as chunk, deferred, openStream, send } from '@deepseek-ai/dsh-testkit'

const key = 'sk-transport-test-0123456789'
const fixture = useFakeProvider(key)

describe('network failures', () => {
  it('a refused connection is TRANSPORT naming the cause', async () => {
    const gone = await FakeProvider.start()
    const url = gone.url
    await gone.stop()
    const unreachable = new OpenAiAdapter({ name: 'fake', baseUrl: url, apiKey: key })
    const chunks = await collect(unreachable.stream(call()))
    expect(chunks).toEqual([errorFinish({ code: 'TRANSPORT', message: expect.stringMatching(/^could not reach fake: .*ECONNREFUSED/) })])
  })

  it('a connection dropped mid-stream is TRANSPORT after the chunks that arrived', async () => {
    const drop = deferred()
    fixture.server.handle(async (_request, res) => {
      openStream(res, { 'x-request-id': 'req_drop' })
      await send(res, chunk({ content: 'Half an ans' }))
      await drop.promise
      res.socket?.destroy()
    })
    const stream = fixture.adapter.stream(call())[Symbol.asyncIterator]()
    const first = await stream.next()
    drop.resolve()
    const rest: StreamChunk[] = []
    for (let next = await stream.next(); !next.done; next = await stream.next()) rest.push(next.value)
    expect([first.value, ...rest]).toEqual([
      { type: 'text-delta', index: 0, text: 'Half an ans' },
      errorFinish({ code: 'TRANSPORT', requestId: 'req_drop', message: expect.stringMatching(/^the connection to fake broke mid-stream: /) }),
    ])
  })

  it('a body that ends cleanly after content but without a finish_reason is TRANSPORT (truncated)', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      await send(res, chunk({ content: 'Half' }))
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'Half' },
      errorFinish({ code: 'TRANSPORT', message: "fake's stream ended before the answer finished (no finish_reason)" }),
    ])
  })

  it('[DONE] without a finish_reason after content is TRANSPORT too', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      await send(res, chunk({ content: 'Half' }))
      await send(res, '[DONE]')
      res.end()
    })
    expect((await collect(fixture.adapter.stream(call()))).at(-1)).toEqual(
      errorFinish({ code: 'TRANSPORT', message: "fake's stream ended before the answer finished (no finish_reason)" }),
    )
  })

  it('a stream that ends without producing anything is EMPTY_RESPONSE', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      await send(res, chunk({ role: 'assistant', content: '' }))
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({ code: 'EMPTY_RESPONSE', message: 'fake ended the stream without producing anything' }),
    ])
  })
})

describe('malformed streams', () => {
  it('data that is not JSON is MALFORMED_STREAM, quoting it with the key redacted', async () => {
    fixture.server.handle(async (request, res) => {
      openStream(res)
      await send(res, chunk({ content: 'ok' }))
      await send(res, `{"oops": ${request.headers.authorization}`)
      res.end()
    })
    const chunks = await collect(fixture.adapter.stream(call()))
    expect(chunks).toEqual([
      { type: 'text-delta', index: 0, text: 'ok' },
      errorFinish({ code: 'MALFORMED_STREAM', message: 'fake sent stream data that is not JSON: "{\\"oops\\": Bearer [redacted]"' }),
    ])
    expect(JSON.stringify(chunks)).not.toContain(key)
  })

  it('lines that are not SSE fields are ignored, as the SSE spec says', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      res.write('this line is not an SSE field\n')
      res.write('event: message\nid: 1\n')
      await send(res, chunk({ content: 'fine' }))
      res.write(': a comment\n\n')
      await send(res, chunk({}, 'stop'))
      await send(res, '[DONE]')
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'fine' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
  })

  it('a response of only non-SSE lines is EMPTY_RESPONSE quoting the first line', async () => {
    fixture.server.handle((_request, res) => {
      openStream(res)
      res.end('<html>proxy error</html>\n')
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'EMPTY_RESPONSE',
        message: 'fake ended the stream without producing anything; it sent lines that are not server-sent events, first "<html>proxy error</html>"',
      }),
    ])
  })
})

describe('timeouts', () => {
  it('no response headers within requestTimeoutMs is TIMEOUT, and the connection is closed', async () => {
    const slow = new OpenAiAdapter({ name: 'fake', baseUrl: fixture.server.url, apiKey: key, requestTimeoutMs: 50 })
    fixture.server.handle(() => {
      // Never answers.
    })
    expect(await collect(slow.stream(call()))).toEqual([
      errorFinish({ code: 'TIMEOUT', message: 'fake sent no response within 50 ms (requestTimeoutMs)' }),
    ])
    await fixture.server.closes[0]
  })

  it('a server that accepts the connection and never speaks is TIMEOUT, and the connection is closed', async () => {
    const sockets: Socket[] = []
    const received = deferred()
    const gone = deferred()
    const mute = createServer((socket) => {
      sockets.push(socket)
      // Reads the request and never answers. (After the abort undici may open a spare connection; only the request's counts.)
      socket.once('data', () => {
        received.resolve()
        socket.on('close', () => gone.resolve())
      })
    })
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve))
    // The deadline's timer is faked, so it fires only once the request has certainly arrived.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const { port } = mute.address() as AddressInfo
      const adapter = new OpenAiAdapter({ name: 'mute', baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: key, requestTimeoutMs: 30_000 })
      const done = collect(adapter.stream(call({ provider: 'mute' })))
      await received.promise
      vi.advanceTimersByTime(30_000)
      expect(await done).toEqual([errorFinish({ code: 'TIMEOUT', message: 'mute sent no response within 30000 ms (requestTimeoutMs)' })])
      await gone.promise
    } finally {
      vi.useRealTimers()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => mute.close(() => resolve()))
    }
  })

  it('a stream silent for idleTimeoutMs is TIMEOUT after the chunks that arrived, and the connection is closed', async () => {
    const idle = new OpenAiAdapter({ name: 'fake', baseUrl: fixture.server.url, apiKey: key, idleTimeoutMs: 50 })
    fixture.server.handle(async (_request, res) => {
      openStream(res, { 'x-request-id': 'req_idle' })
      await send(res, chunk({ content: 'Thinking' }))
      // Then silence.
    })
    expect(await collect(idle.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'Thinking' },
      errorFinish({ code: 'TIMEOUT', requestId: 'req_idle', message: "fake's stream was silent for more than 50 ms (idleTimeoutMs)" }),
    ])
    await fixture.server.closes[0]
  })
})

describe('cancellation', () => {
  it('aborting mid-stream ends the stream with an aborted finish and closes the connection', async () => {
    const controller = new AbortController()
    const serverSawClose = deferred()
    fixture.server.handle(async (_request, res, closed) => {
      openStream(res)
      await send(res, chunk({ content: 'Once upon' }))
      await closed
      serverSawClose.resolve()
    })
    const stream = fixture.adapter.stream(call({ signal: controller.signal }))[Symbol.asyncIterator]()
    const first = await stream.next()
    controller.abort()
    const rest: StreamChunk[] = []
    for (let next = await stream.next(); !next.done; next = await stream.next()) rest.push(next.value)
    expect([first.value, ...rest]).toEqual([
      { type: 'text-delta', index: 0, text: 'Once upon' },
      { type: 'finish', reason: { kind: 'aborted' } },
    ])
    await serverSawClose.promise
  })

  it('aborting while waiting for the response headers ends with an aborted finish and closes the connection', async () => {
    const controller = new AbortController()
    const arrived = deferred()
    fixture.server.handle(() => arrived.resolve())
    const done = collect(fixture.adapter.stream(call({ signal: controller.signal })))
    await arrived.promise
    controller.abort()
    expect(await done).toEqual([{ type: 'finish', reason: { kind: 'aborted' } }])
    await fixture.server.closes[0]
  })

  it('an already aborted signal sends nothing', async () => {
    const controller = new AbortController()
    controller.abort()
    expect(await collect(fixture.adapter.stream(call({ signal: controller.signal })))).toEqual([
      { type: 'finish', reason: { kind: 'aborted' } },
    ])
    expect(fixture.server.requests).toEqual([])
  })

  it('a consumer that stops iterating closes the connection', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      await send(res, chunk({ content: 'first' }))
      // Keeps the stream open until the client goes away.
    })
    for await (const piece of fixture.adapter.stream(call())) {
      expect(piece).toEqual({ type: 'text-delta', index: 0, text: 'first' })
      break
    }
    await fixture.server.closes[0]
  })
})
