import {
  eventPayload,
  HttpExchange,
  modelInfoOf,
  readEventBody,
  redactedStream,
  Secrets,
  streamExchange,
  type LlmFailure,
  type StreamChunk,
  type StreamingPost,
} from '@deepseek-ai/dsh-llm'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { collect, deferred } from './helpers'
import { LocalServer, reply } from './http-server'

const key = 'sk-exchange-test-key-0123456789abcdef'
const secrets = new Secrets(key, {})
const generous = { requestTimeoutMs: 20_000, idleTimeoutMs: 20_000 }
const errorFinish = (failure: LlmFailure): StreamChunk => ({ type: 'finish', reason: { kind: 'error', failure } })

let server: LocalServer
beforeEach(async () => {
  server = await LocalServer.start()
})
afterEach(async () => {
  await server.stop()
})

/** A POST to the local server whose answers are classified by `answerFailure` and whose stream is one text chunk per event line. */
function post(overrides: Partial<StreamingPost> = {}): StreamingPost {
  return {
    signal: undefined,
    provider: 'local',
    deadlines: generous,
    secrets,
    url: `${server.url}/v1/stream`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: '{"hello":"world"}',
    requestIdHeaders: ['request-id', 'x-request-id'],
    answerFailure: (response, text, requestId) => ({ code: 'BAD_REQUEST', message: `HTTP ${response.status}: ${text}`, ...(requestId ? { requestId } : {}) }),
    events: (response, exchange, requestId) => lines(response, exchange, requestId),
    ...overrides,
  }
}

/** Reads a body of `data: <text>` lines into text deltas, then a `stop` finish. */
async function* lines(response: Response, exchange: HttpExchange, requestId: string | undefined): AsyncGenerator<StreamChunk> {
  const out: StreamChunk[] = []
  let pending = ''
  let stopped = false
  const sink = {
    feed(text: string) {
      pending += text
      let end: number
      while (!stopped && (end = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, end)
        pending = pending.slice(end + 1)
        if (line === 'data: [STOP]') stopped = true
        else if (line.startsWith('data: ')) out.push({ type: 'text-delta', index: 0, text: line.slice(6) })
      }
    },
    end() {},
    get stopped() {
      return stopped
    },
  }
  if (yield* readEventBody(response, exchange, sink, out, secrets, requestId)) return
  yield { type: 'finish', reason: { kind: 'stop' } }
}

describe('HttpExchange: the deadlines', () => {
  it('a server that accepts the request and sends no headers fails with TIMEOUT naming requestTimeoutMs', async () => {
    server.answer(() => {})
    const chunks = await collect(streamExchange(post({ deadlines: { requestTimeoutMs: 50, idleTimeoutMs: 20_000 } })))
    expect(chunks).toEqual([errorFinish({ code: 'TIMEOUT', message: 'local sent no response within 50 ms (requestTimeoutMs)' })])
  })

  it('a body that goes silent fails with TIMEOUT naming idleTimeoutMs, after the chunks that arrived, with the request id', async () => {
    server.answer((_req, res, closed) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': 'req_idle' })
      res.write('data: first\n')
      return closed
    })
    const chunks = await collect(streamExchange(post({ deadlines: { requestTimeoutMs: 20_000, idleTimeoutMs: 50 } })))
    expect(chunks).toEqual([
      { type: 'text-delta', index: 0, text: 'first' },
      errorFinish({ code: 'TIMEOUT', requestId: 'req_idle', message: "local's stream was silent for more than 50 ms (idleTimeoutMs)" }),
    ])
    await server.closes[0]
  })

  it('a deadline longer than a Node timer can hold (2^31 ms or more, meant as "practically none") does not fire at once', async () => {
    // Node runs a timer of 2^31 ms or more after 1 ms (with a TimeoutOverflowWarning): every call failed TIMEOUT.
    const warnings: string[] = []
    const onWarning = (warning: Error) => void warnings.push(warning.name)
    process.on('warning', onWarning)
    try {
      const arrived = deferred()
      const sent = deferred()
      const more = deferred()
      server.answer(async (_req, res) => {
        arrived.resolve()
        await sent.promise
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write('data: one\n')
        await more.promise
        res.end('data: two\n')
      })
      const stream = streamExchange(post({ deadlines: { requestTimeoutMs: 2 ** 31, idleTimeoutMs: 30 * 86_400_000 } }))
      const first = stream.next()
      // Headers only once the request is at the server (or the call ended), the rest of the body once the first chunk is read.
      await Promise.race([arrived.promise, first])
      sent.resolve()
      const chunks = [(await first).value]
      const second = stream.next()
      more.resolve()
      chunks.push((await second).value, (await stream.next()).value)
      // The warning is emitted on a later tick than the timer that overflowed.
      await new Promise<void>((resolve) => setImmediate(resolve))
      expect({ chunks, warnings }).toEqual({
        chunks: [
          { type: 'text-delta', index: 0, text: 'one' },
          { type: 'text-delta', index: 0, text: 'two' },
          { type: 'finish', reason: { kind: 'stop' } },
        ],
        warnings: [],
      })
    } finally {
      process.off('warning', onWarning)
    }
  })

  it('a refused connection is TRANSPORT naming the cause', async () => {
    const gone = await LocalServer.start()
    const url = `${gone.url}/v1/stream`
    await gone.stop()
    const chunks = await collect(streamExchange(post({ url })))
    expect(chunks).toEqual([errorFinish({ code: 'TRANSPORT', message: expect.stringMatching(/^could not reach local: .*ECONNREFUSED/) })])
  })

  it("the caller's abort while waiting for headers is an aborted finish, and the connection closes", async () => {
    const controller = new AbortController()
    const arrived = deferred()
    server.answer(() => arrived.resolve())
    const stream = streamExchange(post({ signal: controller.signal }))
    const first = stream.next()
    await arrived.promise
    controller.abort()
    expect(await first).toEqual({ done: false, value: { type: 'finish', reason: { kind: 'aborted' } } })
    expect(await stream.next()).toEqual({ done: true, value: undefined })
    await server.closes[0]
  })

  it('a signal already aborted when the exchange starts sends nothing: the call is one aborted finish', async () => {
    server.answer(reply(200, 'data: one\n', { 'content-type': 'text/event-stream' }))
    const chunks = await collect(streamExchange(post({ signal: AbortSignal.abort() })))
    expect({ chunks, received: server.bodies }).toEqual({ chunks: [{ type: 'finish', reason: { kind: 'aborted' } }], received: [] })
  })

  it('a consumer that stops reading closes the connection of an unfinished stream', async () => {
    server.answer((_req, res, closed) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: one\n')
      return closed
    })
    const stream = streamExchange(post())
    expect((await stream.next()).value).toEqual({ type: 'text-delta', index: 0, text: 'one' })
    await stream.return(undefined)
    await server.closes[0]
  })

  it('return() while a read is pending closes the connection without waiting for the read or the idle deadline, also through redactedStream', async () => {
    const patient = { requestTimeoutMs: 3_600_000, idleTimeoutMs: 3_600_000 }
    const sockets: Promise<void>[] = []
    const stall = (_req: unknown, res: import('node:http').ServerResponse, closed: Promise<void>) => {
      sockets.push(new Promise<void>((resolve) => res.socket!.once('close', () => resolve())))
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: one\n')
      return closed
    }
    server.answer(stall)
    server.answer(stall)
    const outcomes: unknown[] = []
    for (const stream of [streamExchange(post({ deadlines: patient })), redactedStream(streamExchange(post({ deadlines: patient })), secrets, undefined, 'local')]) {
      const first = await stream.next()
      const pending = stream.next()
      await new Promise<void>((resolve) => setImmediate(resolve))
      const returned = await stream.return(undefined)
      await sockets[outcomes.length]
      outcomes.push({ first, pending: await pending, returned })
    }
    const outcome = { first: { done: false, value: { type: 'text-delta', index: 0, text: 'one' } }, pending: { done: true, value: undefined }, returned: { done: true, value: undefined } }
    expect(outcomes).toEqual([outcome, outcome])
  })

  it('a body read to its end completes the exchange: the whole stream, then the finish', async () => {
    server.answer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end('data: one\ndata: two\n')
    })
    expect(await collect(streamExchange(post()))).toEqual([
      { type: 'text-delta', index: 0, text: 'one' },
      { type: 'text-delta', index: 0, text: 'two' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
    expect(server.bodies).toEqual(['{"hello":"world"}'])
  })

  it('a sink that stops ends the reading before the rest of the body', async () => {
    server.answer((_req, res, closed) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write('data: one\ndata: [STOP]\ndata: never\n')
      return closed
    })
    expect(await collect(streamExchange(post()))).toEqual([
      { type: 'text-delta', index: 0, text: 'one' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
    await server.closes[0]
  })
})

describe('streamExchange: answers that are not a stream', () => {
  it('a non-2xx answer goes to answerFailure with its body and the first request id header it carries', async () => {
    server.answer(reply(400, '{"error":"nope"}', { 'x-request-id': 'req_x', 'request-id': 'req_first' }))
    expect(await collect(streamExchange(post()))).toEqual([
      errorFinish({ code: 'BAD_REQUEST', message: 'HTTP 400: {"error":"nope"}', requestId: 'req_first' }),
    ])
  })

  it('an error answer whose body breaks off or stalls is still classified by its status and headers (a 429 keeps its wait), not as TRANSPORT or TIMEOUT', async () => {
    const answered = (response: Response, text: string): LlmFailure => ({
      code: response.status === 429 ? 'RATE_LIMIT' : 'BAD_REQUEST',
      message: `HTTP ${response.status}: ${text || 'no details'}`,
      retryAfterMs: Number(response.headers.get('retry-after')) * 1000,
    })
    server.answer((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' })
      res.write('{"error":')
      setImmediate(() => res.socket!.destroy())
    })
    server.answer((_req, res, closed) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '2' })
      res.write('{"error":')
      return closed
    })
    const cut = await collect(streamExchange(post({ answerFailure: answered })))
    const stalled = await collect(streamExchange(post({ answerFailure: answered, deadlines: { requestTimeoutMs: 20_000, idleTimeoutMs: 50 } })))
    const rateLimited = errorFinish({ code: 'RATE_LIMIT', message: 'HTTP 429: no details', retryAfterMs: 2_000 })
    expect([cut, stalled]).toEqual([[rateLimited], [rateLimited]])
  })

  it('a 200 with a JSON body goes to answerFailure too (a server that ignored stream: true)', async () => {
    server.answer(reply(200, '{"choices":[]}', { 'x-request-id': 'req_json' }))
    expect(await collect(streamExchange(post()))).toEqual([
      errorFinish({ code: 'BAD_REQUEST', message: 'HTTP 200: {"choices":[]}', requestId: 'req_json' }),
    ])
  })

  it('a 200 labelled JSON that is an event stream is read as one also when its first read ends inside the first field name', async () => {
    // A body that hands out its rest only once its first bytes were read: the first read is exactly `first`.
    const bodies = [['da', 'ta: hello\n'], ['\nevent', ': greeting\ndata: hello\n'], ['i', 'd: 7\ndata: hello\n']].map(([first, rest]) => {
      const bytes = new TextEncoder()
      let pulled = false
      return new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(bytes.encode(first)),
        pull: (controller) => {
          if (pulled) return
          pulled = true
          controller.enqueue(bytes.encode(rest))
          controller.close()
        },
      })
    })
    const answers: StreamChunk[][] = []
    vi.stubGlobal('fetch', async () => new Response(bodies[answers.length], { status: 200, headers: { 'content-type': 'application/json' } }))
    try {
      for (let i = 0; i < bodies.length; i++) answers.push(await collect(streamExchange(post())))
    } finally {
      vi.unstubAllGlobals()
    }
    const hello = [{ type: 'text-delta', index: 0, text: 'hello' }, { type: 'finish', reason: { kind: 'stop' } }]
    expect(answers).toEqual([hello, hello, hello])
  })

  it('reads an error body only up to the size cap', async () => {
    const page = 'x'.repeat(1_000_000)
    server.answer(reply(502, page))
    const exchange = new HttpExchange(undefined, 'local', generous)
    try {
      const response = await exchange.request(server.url, { method: 'POST', body: '{}' })
      const text = await exchange.text(response, 1_000)
      expect({ prefix: page.startsWith(text), capped: text.length >= 1_000 && text.length < page.length }).toEqual({ prefix: true, capped: true })
    } finally {
      exchange.close()
    }
  })
})

describe('redactedStream over a real exchange', () => {
  it('a server echoing the key into the error body, the request id and the stream loses it everywhere', async () => {
    server.answer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end(`data: you sent ${req.headers.authorization}\ndata: the key is ${key}.\n`)
    })
    server.answer(reply(401, `{"error":"bad key ${key}"}`, { 'x-request-id': `req_${key}` }))
    const streamed = await collect(redactedStream(streamExchange(post()), secrets, undefined, 'local'))
    const refused = await collect(redactedStream(streamExchange(post()), secrets, undefined, 'local'))
    expect(streamed).toEqual([
      { type: 'text-delta', index: 0, text: 'you sent Bearer [redacted]' },
      { type: 'text-delta', index: 0, text: 'the key is [redacted].' },
      { type: 'finish', reason: { kind: 'stop' } },
    ])
    expect(refused).toEqual([
      errorFinish({ code: 'BAD_REQUEST', message: 'HTTP 401: {"error":"bad key [redacted]"}', requestId: 'req_[redacted]' }),
    ])
  })

  it('a throw from the raw stream becomes a redacted UNKNOWN finish after the held output', async () => {
    async function* raw(): AsyncGenerator<StreamChunk> {
      yield { type: 'text-delta', index: 0, text: 'almost done' }
      throw new Error(`exploded near ${key}`)
    }
    expect(await collect(redactedStream(raw(), secrets, undefined, 'local'))).toEqual([
      { type: 'text-delta', index: 0, text: 'almost done' },
      errorFinish({ code: 'UNKNOWN', message: 'the local adapter failed: exploded near [redacted]' }),
    ])
  })

  it('a signal aborted before the call is one aborted finish, and the raw stream never starts', async () => {
    let started = false
    async function* raw(): AsyncGenerator<StreamChunk> {
      started = true
      yield { type: 'finish', reason: { kind: 'stop' } }
    }
    const chunks = await collect(redactedStream(raw(), secrets, AbortSignal.abort(), 'local'))
    expect({ chunks, started }).toEqual({ chunks: [{ type: 'finish', reason: { kind: 'aborted' } }], started: false })
  })

  it('a transport failure whose cause quotes the key is redacted', () => {
    const exchange = new HttpExchange(undefined, 'local', generous)
    const error = new TypeError('fetch failed', { cause: Object.assign(new Error(`proxy said ${key}`), { code: 'ECONNRESET' }) })
    expect([exchange.failure(error, 'connect', secrets), exchange.failure(error, 'body', secrets, 'req_1')]).toEqual([
      { code: 'TRANSPORT', message: 'could not reach local: fetch failed: ECONNRESET proxy said [redacted]' },
      { code: 'TRANSPORT', message: 'the connection to local broke mid-stream: fetch failed: ECONNRESET proxy said [redacted]', requestId: 'req_1' },
    ])
    exchange.close()
  })
})

describe('event bodies', () => {
  it('an answer without a body ends the call with EMPTY_RESPONSE', async () => {
    const exchange = new HttpExchange(undefined, 'local', generous)
    const sink = { feed() {}, end() {}, stopped: false }
    const body = readEventBody(new Response(null, { status: 200 }), exchange, sink, [], secrets, 'req_9')
    const first = await body.next()
    const last = await body.next()
    exchange.close()
    expect([first, last]).toEqual([
      { done: false, value: errorFinish({ code: 'EMPTY_RESPONSE', message: 'local answered without a body', requestId: 'req_9' }) },
      { done: true, value: true },
    ])
  })

  it('a body whose lines end with a bare CR keeps its last event: the CR at the end of the body ends a line', async () => {
    // As an SSE parser reads (eventsource-parser, the adapters'): a line ends at CR, LF or CRLF, so a CR at the end of
    // the text fed so far is held until the next character shows whether an LF follows. At the end of the body none will.
    let pending = ''
    let data: string[] = []
    const out: StreamChunk[] = []
    const feed = (text: string) => {
      pending += text
      for (let at = pending.search(/[\r\n]/); at !== -1; at = pending.search(/[\r\n]/)) {
        if (pending[at] === '\r' && at === pending.length - 1) break
        const line = pending.slice(0, at)
        pending = pending.slice(pending.startsWith('\r\n', at) ? at + 2 : at + 1)
        if (line === '') {
          for (const text of data) out.push({ type: 'text-delta', index: 0, text })
          data = []
        } else if (line.startsWith('data: ')) data.push(line.slice(6))
      }
    }
    const sink = { feed, end() {}, stopped: false }
    const exchange = new HttpExchange(undefined, 'local', generous)
    const chunks: StreamChunk[] = []
    try {
      const body = readEventBody(new Response('data: one\r\rdata: two\r\r', { status: 200 }), exchange, sink, out, secrets, undefined)
      for await (const chunk of body) chunks.push(chunk)
    } finally {
      exchange.close()
    }
    expect(chunks).toEqual([
      { type: 'text-delta', index: 0, text: 'one' },
      { type: 'text-delta', index: 0, text: 'two' },
    ])
  })

  it('event data that is not JSON is MALFORMED_STREAM quoting its redacted start', () => {
    expect([eventPayload('{"a":1}', 'local', secrets, undefined), eventPayload(`oops ${key}`, 'local', secrets, 'req_1')]).toEqual([
      { ok: true, payload: { a: 1 } },
      { ok: false, failure: { code: 'MALFORMED_STREAM', message: 'local sent stream data that is not JSON: "oops [redacted]"', requestId: 'req_1' } },
    ])
  })
})

describe('modelInfoOf', () => {
  it('reports the configured capabilities, redacted, in fresh arrays; an unconfigured model only its id', () => {
    const caps = { contextWindow: 1_000, maxOutputTokens: 100, reasoningEfforts: ['low', `x-${key}`], defaultReasoningEffort: 'low' }
    const info = modelInfoOf('m1', caps, secrets)
    expect([info, modelInfoOf(`m-${key}`, undefined, secrets), info.reasoningEfforts === caps.reasoningEfforts]).toEqual([
      { id: 'm1', contextWindow: 1_000, maxOutputTokens: 100, reasoningEfforts: ['low', 'x-[redacted]'], defaultReasoningEffort: 'low' },
      { id: 'm-[redacted]' },
      false,
    ])
  })
})
