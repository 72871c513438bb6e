import {
  classifyHttpFailure,
  createUserMessage,
  HttpProviderAdapter,
  readEventBody,
  type GenerateOptions,
  type HttpExchange,
  type HttpFailureContext,
  type HttpProviderSettings,
  type LlmFailure,
  type ProviderRequest,
  type StreamChunk,
} from '@deepseek-ai/dsh-llm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { collect, deferred, mountLlm } from './helpers'
import { LocalServer, reply } from './http-server'

const key = 'sk-adapter-test-key-0123456789abcdef'

/** The smallest HTTP adapter: a JSON body `{ model, text }`, the key as `x-key`, one text delta per `data:` line, a batch per read. */
class LineAdapter extends HttpProviderAdapter<HttpProviderSettings> {
  constructor(settings: Partial<HttpProviderSettings> & { baseUrl: string }, env: Record<string, string | undefined> = {}) {
    super({ name: 'lines', models: {}, headers: {}, requestTimeoutMs: 20_000, idleTimeoutMs: 20_000, ...settings }, { env })
  }

  protected keyProblem(k: string): string | undefined {
    return k.includes(' ') ? 'contains a space' : undefined
  }

  protected body(options: GenerateOptions, model: string): unknown {
    return { model, text: options.messages.map((m) => (m.role === 'user' ? m.content.map((b) => (b.type === 'text' ? b.text : '')).join('') : '')).join('\n') }
  }

  protected request(k: string | undefined): ProviderRequest {
    return { url: `${this.config.baseUrl}/lines`, headers: k ? { 'x-key': k } : {}, requestIdHeaders: ['x-request-id'] }
  }

  protected answerFailure(response: Response, text: string, _requestId: string | undefined, context: HttpFailureContext): LlmFailure {
    return classifyHttpFailure(response.status, response.headers, text, context, { readError: () => undefined, requestIdHeaders: ['x-request-id'], contextOverflow: /too long/, billingAdvice: '.' })
  }

  protected async *eventBatches(
    response: Response,
    exchange: HttpExchange,
    requestId: string | undefined,
    context: HttpFailureContext,
  ): AsyncGenerator<readonly StreamChunk[], void, undefined> {
    const out: StreamChunk[] = []
    let pending = ''
    const sink = {
      feed: (text: string) => {
        pending += text
        const lines = pending.split('\n')
        pending = lines.pop()!
        for (const line of lines) if (line.startsWith('data: ')) out.push({ type: 'text-delta', index: 0, text: line.slice(6) })
      },
      end: () => {},
      stopped: false,
    }
    if (yield* readEventBody(response, exchange, sink, out, context.secrets, requestId).batches) return
    yield [{ type: 'finish', reason: { kind: 'stop' } }]
  }
}

let server: LocalServer
beforeEach(async () => {
  server = await LocalServer.start()
})
afterEach(async () => {
  await server.stop()
})

const call = (model = 'm1'): GenerateOptions => ({ provider: 'lines', model, messages: [createUserMessage('hi')] })

describe('HttpProviderAdapter', () => {
  it('posts JSON with the key from the environment, read at each call, config headers last, and streams the answer redacted', async () => {
    const env: Record<string, string | undefined> = {}
    const adapter = new LineAdapter({ baseUrl: server.url, apiKeyEnv: 'LINES_KEY', headers: { accept: 'text/event-stream; v=2' } }, env)
    const seen: Record<string, string | undefined>[] = []
    server.answer((req, res) => {
      seen.push({ key: req.headers['x-key'] as string, type: req.headers['content-type'], accept: req.headers.accept })
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end(`data: hello\ndata: your key is ${req.headers['x-key']}\n`)
    })
    const unset = await collect(adapter.stream(call()))
    env.LINES_KEY = `  ${key}  `
    const answered = await collect(adapter.stream(call()))
    expect({ unset, answered, seen, bodies: server.bodies }).toEqual({
      unset: [{ type: 'finish', reason: { kind: 'error', failure: { code: 'AUTH', message: 'the LINES_KEY environment variable is not set; export the API key for provider "lines" there, or configure apiKey' } } }],
      answered: [
        { type: 'text-delta', index: 0, text: 'hello' },
        { type: 'text-delta', index: 0, text: 'your key is [redacted]' },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
      seen: [{ key, type: 'application/json', accept: 'text/event-stream; v=2' }],
      bodies: ['{"model":"m1","text":"hi"}'],
    })
  })

  it('refuses without sending: no model and no default; a key from the environment the adapter rejects', async () => {
    const adapter = new LineAdapter({ baseUrl: server.url, apiKeyEnv: 'LINES_KEY' }, { LINES_KEY: 'sk bad' })
    const keyless = new LineAdapter({ baseUrl: server.url })
    expect([await collect(keyless.stream(call(''))), await collect(adapter.stream(call()))]).toEqual([
      [{ type: 'finish', reason: { kind: 'error', failure: { code: 'INVALID_CONFIG', message: 'no model given for provider "lines", and it has no defaultModel' } } }],
      [{ type: 'finish', reason: { kind: 'error', failure: { code: 'INVALID_CONFIG', message: 'the API key in the LINES_KEY environment variable contains a space' } } }],
    ])
    expect(server.bodies).toEqual([])
  })

  it('a throw while the exchange is set up (here the request) ends the stream with a redacted UNKNOWN finish, not a throw of stream()', async () => {
    class BrokenRequest extends LineAdapter {
      protected override request(k: string | undefined): ProviderRequest {
        throw new Error(`no endpoint for the key ${k}`)
      }
    }
    const adapter = new BrokenRequest({ baseUrl: server.url, apiKey: key })
    let stream: AsyncIterable<StreamChunk> | string
    try {
      stream = adapter.stream(call())
    } catch (error) {
      stream = `stream() threw: ${(error as Error).message}`
    }
    expect(typeof stream === 'string' ? stream : await collect(stream)).toEqual([
      { type: 'finish', reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'the lines adapter failed: no endpoint for the key [redacted]' } } },
    ])
    expect(server.bodies).toEqual([])
  })

  it('a call aborted before it starts builds no request body and sends nothing', async () => {
    let built = 0
    class Counting extends LineAdapter {
      protected override body(options: GenerateOptions, model: string): unknown {
        built++
        return super.body(options, model)
      }
    }
    const adapter = new Counting({ baseUrl: server.url, apiKey: key })
    const controller = new AbortController()
    controller.abort()
    const chunks = await collect(adapter.stream({ ...call(), signal: controller.signal }))
    expect({ chunks, built, bodies: server.bodies }).toEqual({ chunks: [{ type: 'finish', reason: { kind: 'aborted' } }], built: 0, bodies: [] })
  })

  it("a subclass's eventBatches are handed out as chunks at hand: a read's first chunk with a promise, the rest plainly, in order", async () => {
    const more = deferred()
    server.answer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      await new Promise<void>((resolve) => res.write('data: one\ndata: two\ndata: three\n', () => resolve()))
      await more.promise
      res.end('data: four\n')
    })
    const stream = new LineAdapter({ baseUrl: server.url, apiKey: key }).stream(call())[Symbol.asyncIterator]()
    const answers = [stream.next()]
    const first = await answers[0]
    answers.push(stream.next(), stream.next(), stream.next())
    more.resolve()
    const rest = [first, ...(await Promise.all(answers.slice(1)))].map((result) => result.value)
    const tail = await collect({ [Symbol.asyncIterator]: () => stream })
    const isThenable = (value: unknown): boolean => typeof (value as { then?: unknown } | null)?.then === 'function'
    expect({ thenable: answers.map(isThenable), chunks: [...rest, ...tail] }).toEqual({
      thenable: [true, false, false, true],
      chunks: [
        { type: 'text-delta', index: 0, text: 'one' },
        { type: 'text-delta', index: 0, text: 'two' },
        { type: 'text-delta', index: 0, text: 'three' },
        { type: 'text-delta', index: 0, text: 'four' },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
    })
  })

  it('classifies an error answer and names the key source; resolveModel reports the configured model, redacted', async () => {
    const adapter = new LineAdapter({ baseUrl: server.url, apiKey: key, defaultModel: 'm1', models: { m1: { contextWindow: 8_000, reasoningEfforts: ['low'] } } })
    server.answer((_req, res) => void res.writeHead(401, { 'x-request-id': 'req_7' }).end(`bad key ${key}`))
    expect([await collect(adapter.stream(call(''))), adapter.resolveModel(''), adapter.resolveModel(`m-${key}`)]).toEqual([
      [{ type: 'finish', reason: { kind: 'error', failure: { code: 'AUTH', status: 401, requestId: 'req_7', message: 'lines refused the credentials (HTTP 401: bad key [redacted]). Check the apiKey of provider "lines".' } } }],
      { id: 'm1', contextWindow: 8_000, reasoningEfforts: ['low'] },
      { id: 'm-[redacted]' },
    ])
  })
})

describe('HttpProviderAdapter: the key lookup runs at the first pull, inside the redaction', () => {
  // Not shaped like a key: only the exact-value redaction can hide it.
  const plainKey = 'opensesame-plain-42'
  /** What a test prints: the key, should it leak, replaced so that a failing assertion does not show it. */
  const shown = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null).split(plainKey).join('<THE KEY>'))
  const leaks = (value: unknown): boolean => JSON.stringify(value ?? null).includes(plainKey)

  /** An adapter whose key check throws an error that quotes the key, counting its calls. */
  class ThrowingCheck extends LineAdapter {
    checks = 0
    protected override keyProblem(k: string): string | undefined {
      this.checks++
      throw new Error(`cannot check ${k}`)
    }
  }

  const lookupFinish = [
    { type: 'finish', reason: { kind: 'error', failure: { code: 'UNKNOWN', message: 'the lines adapter failed: its API key lookup threw: cannot check [redacted]' } } },
  ]

  it('a throwing keyProblem: stream() returns, and the first pull ends the call with a redacted UNKNOWN finish; nothing is sent', async () => {
    const adapter = new ThrowingCheck({ baseUrl: server.url, apiKeyEnv: 'LINES_KEY' }, { LINES_KEY: plainKey })
    let outcome: unknown
    let checksBeforePull = -1
    try {
      const stream = adapter.stream(call())
      checksBeforePull = adapter.checks
      outcome = await collect(stream)
    } catch (error) {
      outcome = `threw: ${(error as Error).message}`
    }
    expect({ leaked: leaks(outcome), outcome: shown(outcome), checksBeforePull, checks: adapter.checks, bodies: server.bodies }).toEqual({
      leaked: false,
      outcome: lookupFinish,
      checksBeforePull: 0,
      checks: 1,
      bodies: [],
    })
  })

  it('the same through ctx.llm: prepareCall resolves (resolveModel needs no key check) and the stream ends with that finish', async () => {
    const adapter = new ThrowingCheck({ baseUrl: server.url, apiKeyEnv: 'LINES_KEY', defaultModel: 'm1' }, { LINES_KEY: plainKey })
    const root = await mountLlm()
    root.llm.registerAdapter(['lines'], adapter)
    let outcome: unknown
    try {
      const prepared = await root.llm.prepareCall({ provider: 'lines', model: 'm1' })
      outcome = await collect(prepared.stream({ messages: call().messages }))
    } catch (error) {
      outcome = `threw: ${(error as Error).message}`
    }
    const oneShot = await collect(root.llm.stream({ provider: 'lines', model: 'm1', messages: call().messages }))
    expect({ leaked: leaks([outcome, oneShot]), outcome: shown(outcome), oneShot: shown(oneShot), bodies: server.bodies }).toEqual({
      leaked: false,
      outcome: lookupFinish,
      oneShot: lookupFinish,
      bodies: [],
    })
  })

  it('a stream that is made but never read looks nothing up; one aborted before its first pull neither', async () => {
    class Counting extends LineAdapter {
      checks = 0
      protected override keyProblem(): string | undefined {
        this.checks++
        return undefined
      }
    }
    const adapter = new Counting({ baseUrl: server.url, apiKeyEnv: 'LINES_KEY' }, { LINES_KEY: plainKey })
    const controller = new AbortController()
    adapter.stream(call())
    const stream = adapter.stream({ ...call(), signal: controller.signal })
    const checksBeforePull = adapter.checks
    controller.abort()
    const chunks = await collect(stream)
    expect({ checksBeforePull, chunks, checks: adapter.checks, bodies: server.bodies }).toEqual({
      checksBeforePull: 0,
      chunks: [{ type: 'finish', reason: { kind: 'aborted' } }],
      checks: 0,
      bodies: [],
    })
  })
})

describe('HttpProviderAdapter: redirects', () => {
  let elsewhere: LocalServer
  beforeEach(async () => {
    elsewhere = await LocalServer.start()
  })
  afterEach(async () => {
    await elsewhere.stop()
  })

  const keyed = () => new LineAdapter({ baseUrl: server.url, apiKey: key, headers: { 'x-gateway-token': 'gw-secret-0123456789' } })
  const seenKeys: Array<[string | undefined, string | undefined]> = []
  const answerLines = (): Parameters<LocalServer['answer']>[0] => (req, res) => {
    seenKeys.push([req.headers['x-key'] as string | undefined, req.headers['x-gateway-token'] as string | undefined])
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    res.end('data: moved here\n')
  }
  beforeEach(() => {
    seenKeys.length = 0
  })
  /** A stream's chunks, with an error finish replaced by its failure. */
  const failureOf = async (stream: AsyncIterable<StreamChunk>) =>
    (await collect(stream)).map((chunk) => (chunk.type === 'finish' && chunk.reason.kind === 'error' ? chunk.reason.failure : chunk))

  it('does not follow a redirect to another origin: the key and credential headers go nowhere else, and the failure says where it pointed', async () => {
    server.answer(reply(307, '', { location: `${elsewhere.url}/v1/lines?token=sk-in-the-query-0123456789abcdef` }))
    elsewhere.answer(answerLines())
    const chunks = await collect(keyed().stream(call()))
    expect({ chunks, elsewhere: elsewhere.bodies, seenKeys }).toEqual({
      chunks: [
        {
          type: 'finish',
          reason: {
            kind: 'error',
            failure: {
              code: 'INVALID_CONFIG',
              status: 307,
              message: `lines answered 307 redirecting to ${elsewhere.url}/v1/lines, another origin than the configured ${server.url}: dsh does not follow it (the API key would go there); set the base URL to the address you trust`,
            },
          },
        },
      ],
      elsewhere: [],
      seenKeys: [],
    })
  })

  it('follows a 307 or 308 within the configured origin with the same method, body and headers', async () => {
    server.answer(reply(307, '', { location: '/v2/lines' }))
    server.answer(reply(308, '', { location: `${server.url}/v3/lines` }))
    server.answer(answerLines())
    const chunks = await collect(keyed().stream(call()))
    expect({ chunks, bodies: server.bodies, seenKeys }).toEqual({
      chunks: [
        { type: 'text-delta', index: 0, text: 'moved here' },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
      bodies: ['{"model":"m1","text":"hi"}', '{"model":"m1","text":"hi"}', '{"model":"m1","text":"hi"}'],
      seenKeys: [[key, 'gw-secret-0123456789']],
    })
  })

  it("a cancel while a followed redirect's request waits ends the call aborted and closes that connection", async () => {
    // (Wrapped: a promise resolved with a promise would wait for it.)
    const held = deferred<{ closed: Promise<void> }>()
    server.answer(reply(307, '', { location: '/v2/lines' }))
    server.answer((_req, _res, closed) => held.resolve({ closed }))
    const controller = new AbortController()
    const chunks = collect(keyed().stream({ ...call(), signal: controller.signal }))
    const { closed } = await held.promise
    controller.abort()
    expect(await chunks).toEqual([{ type: 'finish', reason: { kind: 'aborted' } }])
    await closed
    expect(server.bodies).toHaveLength(2)
  })

  it('refuses a 301, 302 or 303 (fetch would resend the POST as a GET), a redirect without a location, and a redirect loop', async () => {
    const failures: unknown[] = []
    for (const status of [301, 302, 303]) {
      server.answer(reply(status, '', { location: '/v2/lines' }))
      failures.push(await failureOf(keyed().stream(call())))
    }
    server.answer(reply(307, ''))
    failures.push(await failureOf(keyed().stream(call())))
    const before = server.bodies.length
    for (let i = 0; i < 6; i++) server.answer(reply(307, '', { location: '/lines' }))
    failures.push(await failureOf(keyed().stream(call())))
    expect({ failures, loopRequests: server.bodies.length - before }).toEqual({
      failures: [
        ...[301, 302, 303].map((status) => [
          { code: 'INVALID_CONFIG', status, message: `lines answered ${status} redirecting to ${server.url}/v2/lines: a ${status} would resend the request as a GET; set the base URL so that it names that address` },
        ]),
        [{ code: 'INVALID_CONFIG', status: 307, message: 'lines answered 307 (a redirect) without a location to go to' }],
        [{ code: 'INVALID_CONFIG', status: 307, message: `lines answered 307 redirecting to ${server.url}/lines after 5 redirects already: giving up (a redirect loop?)` }],
      ],
      loopRequests: 6,
    })
  })
})

describe('HttpProviderAdapter: a 2xx answer labelled JSON', () => {
  const adapter = () => new LineAdapter({ baseUrl: server.url, apiKey: key })

  it('is read as the event stream it is when its body starts with SSE fields (old llama-cpp-python, some gateways), also after blank lines sent apart', async () => {
    server.answer(reply(200, 'data: hello\ndata: there\n'))
    server.answer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
      res.write('\n')
      await new Promise((resolve) => setImmediate(resolve))
      res.end(': keep-alive\ndata: late\n')
    })
    expect([await collect(adapter().stream(call())), await collect(adapter().stream(call()))]).toEqual([
      [
        { type: 'text-delta', index: 0, text: 'hello' },
        { type: 'text-delta', index: 0, text: 'there' },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
      [
        { type: 'text-delta', index: 0, text: 'late' },
        { type: 'finish', reason: { kind: 'stop' } },
      ],
    ])
  })

  it('is still a failure when it is JSON (an error object, or a server that ignored streaming): the adapter gets the body from its first byte', async () => {
    class Recording extends LineAdapter {
      readonly texts: string[] = []
      protected override answerFailure(response: Response, text: string, requestId: string | undefined, context: HttpFailureContext): LlmFailure {
        this.texts.push(text)
        return super.answerFailure(response, text, requestId, context)
      }
    }
    const sent = `  ${JSON.stringify({ error: { message: 'no streaming here' }, padding: 'x'.repeat(100_000) })}`
    server.answer(reply(200, sent))
    const recording = new Recording({ baseUrl: server.url, apiKey: key })
    const chunks = await collect(recording.stream(call()))
    expect(chunks.map((chunk) => chunk.type)).toEqual(['finish'])
    expect(recording.texts).toHaveLength(1)
    // Read up to the error body cap (65,536 characters, whole network reads), the peeked bytes included.
    const [text] = recording.texts
    expect({ prefix: sent.startsWith(text!), atLeastTheCap: text!.length >= 65_536 }).toEqual({ prefix: true, atLeastTheCap: true })
  })
})
