import { assemble, CallId, createUserMessage, type ContentBlock, type GenerateOptions, type Message, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { OpenAiAdapter } from '../src'
import { call, useFakeProvider } from './support/fixture'
import { collect, errorFinish } from './support/collect'
import { FakeProvider, openAiChunk as chunk, dump, echoHeaders, openStream, reply, send, sse, type Handler } from '@deepseek-ai/dsh-testkit'

const key = 'sk-failure-test-0123456789abcdef'
const fixture = useFakeProvider(key)

describe('HTTP error classification', () => {
  it('401: AUTH, says where the key comes from, and never echoes the key even when the provider does', async () => {
    fixture.server.handle((request, res) => {
      res.writeHead(401, { 'content-type': 'application/json', 'x-request-id': 'req_auth_1' })
      res.end(
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${request.headers.authorization}`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        }),
      )
    })
    const chunks = await collect(fixture.adapter.stream(call()))
    expect(chunks).toEqual([
      errorFinish({
        code: 'AUTH',
        status: 401,
        requestId: 'req_auth_1',
        message:
          'fake refused the credentials (HTTP 401: Incorrect API key provided: Bearer [redacted]; code invalid_api_key; invalid_request_error). Check the apiKey of provider "fake".',
      }),
    ])
    expect(JSON.stringify(chunks)).not.toContain(key)
    expect(fixture.server.requests[0]!.headers.authorization).toBe(`Bearer ${key}`)
  })

  it('403 with a key from the environment: AUTH naming the variable', async () => {
    const fromEnv = new OpenAiAdapter(
      { name: 'fake', baseUrl: fixture.server.url, apiKeyEnv: 'FAKE_PROVIDER_KEY' },
      { env: { FAKE_PROVIDER_KEY: key } },
    )
    fixture.server.handle(reply(403, { error: { message: 'Your key has no access to this model', type: 'permission_error' } }))
    expect(await collect(fromEnv.stream(call()))).toEqual([
      errorFinish({
        code: 'AUTH',
        status: 403,
        message:
          'fake refused the credentials (HTTP 403: Your key has no access to this model; permission_error). Check the FAKE_PROVIDER_KEY environment variable.',
      }),
    ])
    expect(fixture.server.requests[0]!.headers.authorization).toBe(`Bearer ${key}`)
  })

  it('an unset key variable fails with AUTH before anything is sent', async () => {
    const unset = new OpenAiAdapter({ name: 'fake', baseUrl: fixture.server.url, apiKeyEnv: 'FAKE_PROVIDER_KEY' }, { env: {} })
    expect(await collect(unset.stream(call()))).toEqual([
      errorFinish({
        code: 'AUTH',
        message:
          'the FAKE_PROVIDER_KEY environment variable is not set; export the API key for provider "fake" there, or configure apiKey',
      }),
    ])
    expect(fixture.server.requests).toEqual([])
  })

  it('402 (DeepSeek insufficient balance): AUTH, since retrying does not help', async () => {
    fixture.server.handle(
      reply(402, { error: { message: 'Insufficient Balance', type: 'unknown_error', param: null, code: 'invalid_request_error' } }),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'AUTH',
        status: 402,
        message:
          'fake refused the call for billing reasons (HTTP 402: Insufficient Balance; code invalid_request_error; unknown_error). Top up or change the account; retrying will not help.',
      }),
    ])
  })

  it('429: RATE_LIMIT with retryAfterMs from retry-after seconds', async () => {
    fixture.server.handle(
      reply(
        429,
        { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after': '2', 'x-request-id': 'req_rl' },
      ),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'RATE_LIMIT',
        status: 429,
        retryAfterMs: 2000,
        requestId: 'req_rl',
        message:
          'fake is rate limiting requests (HTTP 429: Rate limit reached for requests; code rate_limit_exceeded; requests). The provider asks to wait 2000 ms.',
      }),
    ])
  })

  it('429: retry-after-ms wins over retry-after', async () => {
    fixture.server.handle(reply(429, { error: { message: 'slow down' } }, { 'retry-after': '9', 'retry-after-ms': '1500' }))
    const [finish] = await collect(fixture.adapter.stream(call()))
    expect(finish).toMatchObject({ reason: { kind: 'error', failure: { code: 'RATE_LIMIT', retryAfterMs: 1500 } } })
  })

  it('429: retry-after as an HTTP date is measured from the adapter clock', async () => {
    const now = Date.parse('Mon, 30 Nov 2026 06:00:00 GMT')
    const clocked = new OpenAiAdapter({ name: 'fake', baseUrl: fixture.server.url, apiKey: key }, { now: () => now })
    fixture.server.handle(reply(429, { error: { message: 'slow down' } }, { 'retry-after': 'Mon, 30 Nov 2026 06:00:30 GMT' }))
    const [finish] = await collect(clocked.stream(call()))
    expect(finish).toMatchObject({ reason: { kind: 'error', failure: { code: 'RATE_LIMIT', retryAfterMs: 30_000 } } })
  })

  it('429 for an exhausted quota is AUTH, not a rate limit', async () => {
    fixture.server.handle(
      reply(429, {
        error: { message: 'You exceeded your current quota, please check your plan.', type: 'insufficient_quota', code: 'insufficient_quota' },
      }),
    )
    const [finish] = await collect(fixture.adapter.stream(call()))
    expect(finish).toMatchObject({ reason: { kind: 'error', failure: { code: 'AUTH', status: 429 } } })
  })

  it('5xx: SERVER, keeping a retry hint when the provider gives one', async () => {
    fixture.server.handle(
      reply(503, { error: { message: 'Server overloaded, please retry shortly.', type: 'server_error' } }, { 'retry-after': '1' }),
      reply(500, 'Internal Server Error'),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'SERVER',
        status: 503,
        retryAfterMs: 1000,
        message: 'fake had a server error (HTTP 503: Server overloaded, please retry shortly.; server_error); try again later.',
      }),
    ])
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({ code: 'SERVER', status: 500, message: 'fake had a server error (HTTP 500: Internal Server Error); try again later.' }),
    ])
  })

  it('400 naming the context length: CONTEXT_OVERFLOW (OpenAI and DeepSeek wording)', async () => {
    fixture.server.handle(
      reply(400, {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      }),
      reply(400, {
        error: {
          message:
            "This model's maximum context length is 131072 tokens. However, you requested 140000 tokens (136000 in the messages, 4000 in the completion). Please reduce the length of the messages or completion.",
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        },
      }),
    )
    const first = await collect(fixture.adapter.stream(call()))
    expect(first).toEqual([
      errorFinish({
        code: 'CONTEXT_OVERFLOW',
        status: 400,
        message:
          "the request does not fit the context window of fake/test-model (HTTP 400: This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.; code context_length_exceeded; invalid_request_error). Shorten or compact the history.",
      }),
    ])
    const [second] = await collect(fixture.adapter.stream(call()))
    expect(second).toMatchObject({ reason: { kind: 'error', failure: { code: 'CONTEXT_OVERFLOW', status: 400 } } })
  })

  it('400 from llama.cpp\'s server (exceed_context_size_error): CONTEXT_OVERFLOW, so compaction can act', async () => {
    fixture.server.handle(
      reply(400, {
        error: {
          code: 400,
          message: 'request (13392 tokens) exceeds the available context size (8192 tokens), try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 13392,
          n_ctx: 8192,
        },
      }),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'CONTEXT_OVERFLOW',
        status: 400,
        message:
          'the request does not fit the context window of fake/test-model (HTTP 400: request (13392 tokens) exceeds the available context size (8192 tokens), try increasing it; code 400; exceed_context_size_error). Shorten or compact the history.',
      }),
    ])
  })

  it('400 from Gemini\'s and xAI\'s OpenAI-compatible endpoints naming the token limit: CONTEXT_OVERFLOW', async () => {
    fixture.server.handle(
      reply(400, [
        { error: { code: 400, message: 'The input token count (1300000) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } },
      ]),
      reply(400, { code: 'Client specified an invalid argument', error: "This model's maximum prompt length is 131072 but the request contains 537812 tokens." }),
    )
    const codes = []
    for (let i = 0; i < 2; i++) {
      const [finish] = await collect(fixture.adapter.stream(call()))
      codes.push(finish?.type === 'finish' && finish.reason.kind === 'error' ? finish.reason.failure.code : finish)
    }
    expect(codes).toEqual(['CONTEXT_OVERFLOW', 'CONTEXT_OVERFLOW'])
  })

  it('the context-limit errors of Text Generation Inference and Together (HTTP 400/422, "`inputs` tokens + `max_new_tokens` must be <=") are CONTEXT_OVERFLOW', async () => {
    fixture.server.handle(
      reply(422, { error: 'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 512 `max_new_tokens`', error_type: 'validation' }),
      reply(400, { error: { message: 'Input validation error: `inputs` must have less than 8192 tokens. Given: 9100', type: 'invalid_request_error' } }),
    )
    const codes = []
    for (let i = 0; i < 2; i++) {
      const [finish] = await collect(fixture.adapter.stream(call()))
      codes.push(finish?.type === 'finish' && finish.reason.kind === 'error' ? finish.reason.failure.code : finish)
    }
    expect(codes).toEqual(['CONTEXT_OVERFLOW', 'CONTEXT_OVERFLOW'])
  })

  it('other 4xx: BAD_REQUEST with the provider message', async () => {
    fixture.server.handle(
      reply(400, { error: { message: 'Invalid value for temperature', type: 'invalid_request_error', param: 'temperature' } }),
      reply(404, { error: { message: 'The model `nope` does not exist', type: 'invalid_request_error', code: 'model_not_found' } }),
      reply(422, { detail: [{ loc: ['body', 'messages'], msg: 'field required' }] }),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'BAD_REQUEST',
        status: 400,
        message: 'fake rejected the request for test-model (HTTP 400: Invalid value for temperature; invalid_request_error).',
      }),
    ])
    const [notFound] = await collect(fixture.adapter.stream(call()))
    expect(notFound).toMatchObject({ reason: { kind: 'error', failure: { code: 'BAD_REQUEST', status: 404 } } })
    const [unprocessable] = await collect(fixture.adapter.stream(call()))
    expect(unprocessable).toMatchObject({ reason: { kind: 'error', failure: { code: 'BAD_REQUEST', status: 422 } } })
  })

  it('a server that refuses stream_options (Mistral\'s 422 extra_forbidden): its detail is quoted and the message says to set streamUsage: false', async () => {
    fixture.server.handle(
      reply(422, {
        object: 'error',
        message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'stream_options', 'include_usage'], msg: 'Extra inputs are not permitted', input: true }] },
        type: 'invalid_request_error',
        param: null,
        code: null,
      }),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'BAD_REQUEST',
        status: 422,
        message:
          'fake rejected the request for test-model (HTTP 422: {"detail":[{"type":"extra_forbidden","loc":["body","stream_options","include_usage"],"msg":"Extra inputs are not permitted","input":true}]}; invalid_request_error). It does not accept stream_options: set streamUsage: false for this provider.',
      }),
    ])
  })

  it('408: TIMEOUT', async () => {
    fixture.server.handle(reply(408, 'Request Timeout'))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({ code: 'TIMEOUT', status: 408, message: 'fake timed out the request (HTTP 408: Request Timeout).' }),
    ])
  })
})

describe('failures inside a successful response', () => {
  it('an error object in the stream ends it after the chunks already streamed', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res, { 'x-request-id': 'req_mid' })
      await send(res, chunk({ content: 'Partial' }))
      await send(res, { error: { message: 'The server had an error while processing your request.', type: 'server_error' } })
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'Partial' },
      errorFinish({
        code: 'SERVER',
        requestId: 'req_mid',
        message: 'fake sent an error in the stream: The server had an error while processing your request.; server_error',
      }),
    ])
  })

  it('an in-stream error with a numeric code is classified as that HTTP status (vLLM style)', async () => {
    fixture.server.handle(
      sse([{ object: 'error', message: 'This model\'s maximum context length is 4096 tokens.', type: 'BadRequestError', code: 400, error: { message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', code: 400 } }]),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'CONTEXT_OVERFLOW',
        status: 400,
        message: "fake sent an error in the stream: This model's maximum context length is 4096 tokens.; code 400; BadRequestError",
      }),
    ])
  })

  it('an error sent as an `error:` field instead of data (llama.cpp server builds of 2025) is classified, not lost', async () => {
    fixture.server.handle(async (_request, res) => {
      openStream(res)
      res.write(
        'error: {"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}\n\n',
      )
      await send(res, '[DONE]')
      res.end()
    })
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'CONTEXT_OVERFLOW',
        status: 400,
        message:
          'fake sent an error in the stream: the request exceeds the available context size. try increasing the context size or enable context shift; code 400; invalid_request_error',
      }),
    ])
  })

  it('a 200 JSON error body (a server that does not stream its errors) is classified', async () => {
    fixture.server.handle(reply(200, { error: { message: 'Rate limit exceeded', type: 'rate_limit_error' } }))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({ code: 'RATE_LIMIT', message: 'fake sent an error in the stream: Rate limit exceeded; rate_limit_error' }),
    ])
  })

  it('a 200 JSON completion instead of a stream is MALFORMED_STREAM', async () => {
    fixture.server.handle(reply(200, { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] }))
    const [finish] = await collect(fixture.adapter.stream(call()))
    expect(finish).toMatchObject({
      reason: { kind: 'error', failure: { code: 'MALFORMED_STREAM', message: expect.stringContaining('answered with JSON instead of an event stream') } },
    })
  })

  it('finish_reason content_filter is a BAD_REQUEST error; insufficient_system_resource a SERVER error; an unknown one UNKNOWN', async () => {
    fixture.server.handle(
      sse([chunk({ content: 'I' }), chunk({}, 'content_filter')]),
      sse([chunk({ content: 'I' }), chunk({}, 'insufficient_system_resource')]),
      sse([chunk({ content: 'I' }), chunk({}, 'mystery')]),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'text-delta', index: 0, text: 'I' },
      errorFinish({
        code: 'BAD_REQUEST',
        message: 'fake\'s content filter stopped the answer (finish_reason "content_filter"); rephrase the request',
      }),
    ])
    expect((await collect(fixture.adapter.stream(call()))).at(-1)).toEqual(
      errorFinish({
        code: 'SERVER',
        message: 'fake stopped the answer for lack of server resources (finish_reason "insufficient_system_resource"); try again later',
      }),
    )
    expect((await collect(fixture.adapter.stream(call()))).at(-1)).toEqual(
      errorFinish({ code: 'UNKNOWN', message: 'fake ended the answer with an unknown finish_reason "mystery"' }),
    )
  })

  it('Mistral\'s finish reasons: model_length is max-tokens (the answer was cut), error is a retryable SERVER error', async () => {
    fixture.server.handle(sse([chunk({ content: 'I' }), chunk({}, 'model_length')]), sse([chunk({ content: 'I' }), chunk({}, 'error')]))
    expect((await collect(fixture.adapter.stream(call()))).at(-1)).toEqual({ type: 'finish', reason: { kind: 'max-tokens' } })
    expect((await collect(fixture.adapter.stream(call()))).at(-1)).toEqual(
      errorFinish({ code: 'SERVER', message: 'fake failed while it generated the answer (finish_reason "error"); try again' }),
    )
  })

  it('a tool call that never gets a function name is MALFORMED_STREAM', async () => {
    fixture.server.handle(sse([chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { arguments: '{}' } }] }), chunk({}, 'tool_calls')]))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({ code: 'MALFORMED_STREAM', message: 'fake streamed a tool call (content block 0) without a function name' }),
    ])
  })
})

describe('requests refused before sending', () => {
  it('a block type the adapter does not know is BAD_REQUEST naming where it is, and nothing is sent', async () => {
    const citation = { type: 'citation', url: 'https://example.com' } as unknown as ContentBlock
    const messages: Message[] = [createUserMessage('hi'), createUserMessage([{ type: 'text', text: 'see' }, citation])]
    expect(await collect(fixture.adapter.stream(call({ messages })))).toEqual([
      errorFinish({
        code: 'BAD_REQUEST',
        message:
          'messages[1].content[1] is a "citation" block in a user message; the OpenAI-compatible adapter sends only text, image and tool-result blocks there',
      }),
    ])
    expect(fixture.server.requests).toEqual([])
  })

  it('a tool-call block in a user message is refused', async () => {
    const messages: Message[] = [
      createUserMessage([{ type: 'tool-call', id: CallId('call_1'), name: 'x', arguments: '{}' }]),
    ]
    const [finish] = await collect(fixture.adapter.stream(call({ messages })))
    expect(finish).toMatchObject({ reason: { kind: 'error', failure: { code: 'BAD_REQUEST' } } })
    expect(fixture.server.requests).toEqual([])
  })

  it('no model and no defaultModel is INVALID_CONFIG', async () => {
    expect(await collect(fixture.adapter.stream(call({ model: '' })))).toEqual([
      errorFinish({ code: 'INVALID_CONFIG', message: 'no model given for provider "fake", and it has no defaultModel' }),
    ])
  })
})

describe('duplicate tool-call ids', () => {
  const first = { index: 0, id: 'call_same', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }
  const second = { index: 1, id: 'call_same', type: 'function', function: { name: 'write_file', arguments: '{"path":"a"}' } }
  const refused = errorFinish({
    code: 'MALFORMED_STREAM',
    requestId: 'req_dup',
    message:
      'fake streamed two tool calls with the id "call_same" (content blocks 0 and 1); the tool calls of one answer need distinct ids, so the answer cannot be used',
  })

  it('a second call with the id of the first ends the stream as MALFORMED_STREAM after the first call, and closes the connection', async () => {
    fixture.server.handle(async (_request, res, closed) => {
      openStream(res, { 'x-request-id': 'req_dup' })
      await send(res, chunk({ role: 'assistant', content: null, tool_calls: [first] }))
      await send(res, chunk({ tool_calls: [second] }))
      await send(res, chunk({}, 'tool_calls'))
      // Would go on; the adapter must hang up.
      await closed
    })
    const chunks = await collect(fixture.adapter.stream(call()))
    expect(chunks).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_same', name: 'read_file', argumentsDelta: '{"path":"a"}' },
      refused,
    ])
    await fixture.server.closes[0]
    // What the loop would keep of it: the first call alone, and the failure.
    expect(assemble(chunks as StreamChunk[])).toEqual({
      content: [{ type: 'tool-call', id: 'call_same', name: 'read_file', arguments: '{"path":"a"}' }],
      finishReason: refused.reason,
    })
  })

  it('two calls with one id in the same payload (servers that send calls whole) are refused the same way', async () => {
    fixture.server.handle(sse([chunk({ tool_calls: [first, second] }), chunk({}, 'tool_calls')], { headers: { 'x-request-id': 'req_dup' } }))
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      { type: 'tool-call-delta', index: 0, id: 'call_same', name: 'read_file', argumentsDelta: '{"path":"a"}' },
      refused,
    ])
  })

  it('a repeated id is refused even when the second call announces its name only later', async () => {
    fixture.server.handle(
      sse([
        chunk({ tool_calls: [first] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_same', function: { arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 1, function: { name: 'write_file', arguments: 'th":"a"}' } }] }),
        chunk({}, 'tool_calls'),
      ], { headers: { 'x-request-id': 'req_dup' } }),
    )
    expect((await collect(fixture.adapter.stream(call()))).at(-1)).toEqual(refused)
  })
})

describe('the base URL path hint (HTTP 404)', () => {
  it('a 404 from a base URL without /v1 suggests adding it', async () => {
    const root = fixture.server.url.replace(/\/v1$/, '')
    const adapter = new OpenAiAdapter({ name: 'fake', baseUrl: root, apiKey: key })
    fixture.server.handle(reply(404, '404 page not found'))
    expect(await collect(adapter.stream(call()))).toEqual([
      errorFinish({
        code: 'BAD_REQUEST',
        status: 404,
        message: `fake rejected the request for test-model (HTTP 404: 404 page not found). The base URL ${root} has no /v1 in its path, where most OpenAI-compatible servers serve the API: did you mean ${root}/v1?`,
      }),
    ])
    expect(fixture.server.requests[0]!.url).toBe('/chat/completions')
  })

  it('gives no hint when the path has a version, or when the 404 is about the model', async () => {
    const root = fixture.server.url.replace(/\/v1$/, '')
    const unversioned = new OpenAiAdapter({ name: 'fake', baseUrl: root, apiKey: key })
    fixture.server.handle(
      reply(404, { detail: 'Not Found' }),
      reply(404, { error: { message: 'The model `nope` does not exist', code: 'model_not_found' } }),
    )
    expect(await collect(fixture.adapter.stream(call()))).toEqual([
      errorFinish({ code: 'BAD_REQUEST', status: 404, message: 'fake rejected the request for test-model (HTTP 404: Not Found).' }),
    ])
    expect(await collect(unversioned.stream(call()))).toEqual([
      errorFinish({
        code: 'BAD_REQUEST',
        status: 404,
        message: 'fake rejected the request for test-model (HTTP 404: The model `nope` does not exist; code model_not_found).',
      }),
    ])
  })
})

describe('a server that echoes everything it gets: no credential leaves the adapter', () => {
  const proxyToken = 'proxy-s3cret-token-42'
  const envKey = 'sk-echo-env-0123456789abcdef'
  const credentials = [key, envKey, proxyToken]
  /** The credentials found in `value`'s JSON. */
  const leaks = (value: unknown) => credentials.filter((secret) => JSON.stringify(value).includes(secret))

  /** One adapter with a configured key, one with a key from the environment; both send a credential header. */
  const adapters = () => [
    new OpenAiAdapter({ name: 'fake', baseUrl: fixture.server.url, apiKey: key, headers: { 'X-Proxy-Token': proxyToken } }),
    new OpenAiAdapter(
      { name: 'fake', baseUrl: fixture.server.url, apiKeyEnv: 'ECHO_KEY', headers: { 'X-Proxy-Token': proxyToken } },
      { env: { ECHO_KEY: envKey } },
    ),
  ]

  const corpus: Array<[string, Handler, Record<string, unknown>]> = [
    [
      'an HTTP 401 whose body and headers echo the request',
      (request, res) => {
        res.writeHead(401, { 'content-type': 'application/json', ...echoHeaders(request) })
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${dump(request)}`, code: 'invalid_api_key' } }))
      },
      { code: 'AUTH', status: 401, requestId: 'Bearer [redacted]' },
    ],
    [
      'an HTTP 429 with echoed headers and a text body',
      (request, res) => {
        res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '1', ...echoHeaders(request) })
        res.end(`slow down ${dump(request)}`)
      },
      { code: 'RATE_LIMIT', status: 429, retryAfterMs: 1000, requestId: 'Bearer [redacted]' },
    ],
    [
      'an HTTP 500 quoting the raw request',
      (request, res) => {
        res.writeHead(500, { 'content-type': 'text/plain', ...echoHeaders(request) })
        res.end(`upstream failed for ${dump(request)}`)
      },
      { code: 'SERVER', status: 500, requestId: 'Bearer [redacted]' },
    ],
    [
      'a 200 JSON echo of the request instead of a stream (httpbin style)',
      (request, res) => {
        res.writeHead(200, { 'content-type': 'application/json', ...echoHeaders(request) })
        res.end(dump(request))
      },
      { code: 'MALFORMED_STREAM', requestId: 'Bearer [redacted]' },
    ],
    [
      'an error event in the stream that echoes the request',
      async (request, res) => {
        openStream(res, echoHeaders(request))
        await send(res, chunk({ content: 'ok' }))
        await send(res, { error: { message: `internal error for ${dump(request)}`, type: 'server_error' } })
        res.end()
      },
      { code: 'SERVER', requestId: 'Bearer [redacted]' },
    ],
    [
      'stream data that is not JSON, echoing the request',
      async (request, res) => {
        openStream(res, echoHeaders(request))
        await send(res, `not json ${dump(request)}`)
        res.end()
      },
      { code: 'MALFORMED_STREAM', requestId: 'Bearer [redacted]' },
    ],
    [
      'a body of lines that are not server-sent events, echoing the request',
      (request, res) => {
        openStream(res, echoHeaders(request))
        res.end(`${String(request.headers.authorization)} ${String(request.headers['x-proxy-token'])}\n`)
      },
      { code: 'EMPTY_RESPONSE', requestId: 'Bearer [redacted]' },
    ],
    [
      'a request id set to another key-shaped secret',
      (_request, res) => {
        res.writeHead(503, { 'content-type': 'text/plain', 'x-request-id': 'sk-proj-someone-elses-0123456789' })
        res.end('overloaded')
      },
      { code: 'SERVER', status: 503, requestId: '[redacted]' },
    ],
  ]

  for (const [what, handler, expected] of corpus) {
    it(what, async () => {
      const both = adapters()
      fixture.server.handle(handler, handler)
      for (const adapter of both) {
        const chunks = await collect(adapter.stream(call()))
        expect(chunks.at(-1)).toEqual(errorFinish({ ...expected, message: expect.any(String) }))
        expect(leaks(chunks)).toEqual([])
      }
      // The server did get the credentials: the redaction is what kept them out.
      expect(fixture.server.requests.map((r) => [r.headers.authorization, r.headers['x-proxy-token']])).toEqual([
        [`Bearer ${key}`, proxyToken],
        [`Bearer ${envKey}`, proxyToken],
      ])
    })
  }

  it('model output that echoes credentials, split anywhere across deltas, is redacted in every block', async () => {
    const split = (text: string, ...at: number[]) => [0, ...at].map((from, i) => text.slice(from, at[i] ?? text.length))
    const handler: Handler = async (request, res) => {
      const authorization = String(request.headers.authorization)
      openStream(res, echoHeaders(request))
      for (const piece of split(`token ${proxyToken} seen`, 8, 14)) await send(res, chunk({ reasoning_content: piece }))
      for (const piece of split(`Your header: ${authorization}. Done.`, 21, 27, 40)) await send(res, chunk({ content: piece }))
      const args = JSON.stringify({ auth: authorization })
      await send(res, chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'note', arguments: args.slice(0, 12) } }] }))
      await send(res, chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(12) } }] }))
      await send(res, chunk({}, 'tool_calls'))
      await send(res, '[DONE]')
      res.end()
    }
    const both = adapters()
    fixture.server.handle(handler, handler)
    for (const adapter of both) {
      const chunks = await collect(adapter.stream(call()))
      expect(assemble(chunks as StreamChunk[])).toEqual({
        content: [
          { type: 'reasoning', text: 'token [redacted] seen' },
          { type: 'text', text: 'Your header: Bearer [redacted]. Done.' },
          { type: 'tool-call', id: 'call_1', name: 'note', arguments: '{"auth":"Bearer [redacted]"}' },
        ],
        finishReason: { kind: 'tool-calls' },
      })
      expect(leaks(chunks)).toEqual([])
    }
  })

  it('a failure thrown inside the adapter is still a finish, redacted', async () => {
    const broken = new OpenAiAdapter(
      { name: 'fake', baseUrl: fixture.server.url, apiKey: key },
      {
        now: () => {
          throw new Error(`clock failed near ${key}`)
        },
      },
    )
    fixture.server.handle(reply(503, 'overloaded'))
    expect(await collect(broken.stream(call()))).toEqual([
      errorFinish({ code: 'UNKNOWN', message: 'the fake adapter failed: clock failed near [redacted]' }),
    ])
  })

  it('model info names no credential', () => {
    expect(adapters()[0]!.resolveModel(`Bearer ${key}`)).toEqual({ id: 'Bearer [redacted]' })
  })
})
