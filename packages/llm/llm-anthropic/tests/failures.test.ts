import { createUserMessage, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { echoHeaders, FakeProvider, reply } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect } from './support/wire'

const apiKey = 'sk-ant-failure-test-0123456789'
const now = Date.parse('2026-12-01T12:00:00Z')
let server: FakeProvider
let adapter: AnthropicAdapter

beforeEach(async () => {
  server = await FakeProvider.start()
  adapter = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKey }, { now: () => now })
})

afterEach(async () => {
  await server.stop()
})

const run = (a: AnthropicAdapter = adapter) => collect(a.stream({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('hi')] }))
const apiError = (type: string, message: string) => ({ type: 'error', error: { type, message }, request_id: 'req_body' })
const only = (chunks: StreamChunk[]) => {
  expect(chunks).toHaveLength(1)
  const finish = chunks[0]!
  if (finish.type !== 'finish' || finish.reason.kind !== 'error') throw new Error(`expected an error finish, got ${JSON.stringify(finish)}`)
  return finish.reason.failure
}

describe('failures are classified, with the provider words, hints and request id', () => {
  it('maps each documented HTTP error to its code', async () => {
    const headers = { 'request-id': 'req_1' }
    server.handle(
      reply(401, apiError('authentication_error', 'invalid x-api-key'), headers),
      reply(403, apiError('permission_error', 'Your API key does not have permission to use the specified resource.'), headers),
      reply(404, apiError('not_found_error', 'model: claude-nope'), headers),
      reply(413, apiError('request_too_large', 'Request exceeds the maximum allowed number of bytes.'), headers),
      reply(400, apiError('invalid_request_error', 'prompt is too long: 215000 tokens > 200000 maximum'), headers),
      reply(400, apiError('invalid_request_error', 'max_tokens: must be at most 64000'), headers),
      reply(429, apiError('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'), { ...headers, 'retry-after': '7' }),
      reply(529, apiError('overloaded_error', 'Overloaded'), { ...headers, 'retry-after': 'Tue, 01 Dec 2026 12:00:03 GMT' }),
      reply(500, apiError('api_error', 'Internal server error'), headers),
    )
    const failures = []
    for (let i = 0; i < 9; i++) failures.push(only(await run()))
    expect(failures).toEqual([
      { code: 'AUTH', status: 401, requestId: 'req_1', message: 'claude refused the credentials (HTTP 401: invalid x-api-key; authentication_error). Check the apiKey of provider "claude".' },
      {
        code: 'AUTH',
        status: 403,
        requestId: 'req_1',
        message: 'claude refused access with these credentials (HTTP 403: Your API key does not have permission to use the specified resource.; permission_error). Check the apiKey of provider "claude".',
      },
      { code: 'BAD_REQUEST', status: 404, requestId: 'req_1', message: 'claude found no such resource for claude-test (HTTP 404: model: claude-nope; not_found_error). Check the model id.' },
      {
        code: 'CONTEXT_OVERFLOW',
        status: 413,
        requestId: 'req_1',
        message: 'the request does not fit the context window of claude/claude-test (HTTP 413: Request exceeds the maximum allowed number of bytes.; request_too_large). Shorten or compact the history.',
      },
      {
        code: 'CONTEXT_OVERFLOW',
        status: 400,
        requestId: 'req_1',
        message:
          'the request does not fit the context window of claude/claude-test (HTTP 400: prompt is too long: 215000 tokens > 200000 maximum; invalid_request_error). Shorten or compact the history.',
      },
      { code: 'BAD_REQUEST', status: 400, requestId: 'req_1', message: 'claude rejected the request for claude-test (HTTP 400: max_tokens: must be at most 64000; invalid_request_error).' },
      {
        code: 'RATE_LIMIT',
        status: 429,
        retryAfterMs: 7000,
        requestId: 'req_1',
        message: 'claude is rate limiting requests (HTTP 429: Number of request tokens has exceeded your per-minute rate limit; rate_limit_error). The provider asks to wait 7000 ms.',
      },
      { code: 'SERVER', status: 529, retryAfterMs: 3000, requestId: 'req_1', message: 'claude is overloaded (HTTP 529: Overloaded; overloaded_error); try again shortly.' },
      { code: 'SERVER', status: 500, requestId: 'req_1', message: 'claude had a server error (HTTP 500: Internal server error; api_error); try again later.' },
    ])
  })

  it('400 for input plus max_tokens beyond the window ("exceed context limit") is CONTEXT_OVERFLOW, so compaction can act', async () => {
    server.handle(
      reply(
        400,
        apiError('invalid_request_error', 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again'),
        { 'request-id': 'req_1' },
      ),
    )
    expect(only(await run())).toEqual({
      code: 'CONTEXT_OVERFLOW',
      status: 400,
      requestId: 'req_1',
      message:
        'the request does not fit the context window of claude/claude-test (HTTP 400: input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again; invalid_request_error). Shorten or compact the history.',
    })
  })

  it('a 404 that is not about a model hints at the base URL', async () => {
    server.handle(reply(404, apiError('not_found_error', 'Not found')))
    expect(only(await run()).message).toBe(`claude found no such resource for claude-test (HTTP 404: Not found; not_found_error). Check the base URL (${server.origin}): requests go to <baseUrl>/v1/messages.`)
  })

  it('no key: AUTH naming the variable, and nothing is sent; a key with a stray character: INVALID_CONFIG without the key', async () => {
    const unset = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKeyEnv: 'DSH_TEST_ANTHROPIC_KEY' }, { env: {} })
    const broken = new AnthropicAdapter({ name: 'claude', baseUrl: server.origin, apiKeyEnv: 'DSH_TEST_ANTHROPIC_KEY' }, { env: { DSH_TEST_ANTHROPIC_KEY: 'sk-ant-abc\u2013def' } })
    expect([only(await run(unset)), only(await run(broken))]).toEqual([
      { code: 'AUTH', message: 'the DSH_TEST_ANTHROPIC_KEY environment variable is not set; export the API key for provider "claude" there, or configure apiKey' },
      {
        code: 'INVALID_CONFIG',
        message: 'the API key in the DSH_TEST_ANTHROPIC_KEY environment variable contains the character U+2013 at position 11; API keys are printable ASCII, so it was probably pasted with a stray character',
      },
    ])
    expect(server.requests).toEqual([])
  })

  it('a server that echoes the request (body, headers, request id) never gets the key into the failure', async () => {
    server.handle((request, res) => {
      res.writeHead(401, { 'content-type': 'application/json', ...echoHeaders(request), 'request-id': String(request.headers['x-api-key']) })
      res.end(JSON.stringify(apiError('authentication_error', `bad key ${String(request.headers['x-api-key'])}`)))
    })
    const failure = only(await run())
    expect(JSON.stringify(failure)).not.toContain(apiKey)
    expect(failure).toEqual({
      code: 'AUTH',
      status: 401,
      requestId: '[redacted]',
      message: 'claude refused the credentials (HTTP 401: bad key [redacted]; authentication_error). Check the apiKey of provider "claude".',
    })
  })

  it('a 200 JSON answer is an error when it holds one, and MALFORMED_STREAM when the server ignored stream: true', async () => {
    server.handle(reply(200, apiError('overloaded_error', 'Overloaded')), reply(200, { type: 'message', content: [] }))
    expect([only(await run()).code, only(await run()).code]).toEqual(['SERVER', 'MALFORMED_STREAM'])
  })

  it('a 200 answer that is no event stream (a proxy\'s HTML page) is EMPTY_RESPONSE quoting its first line, redacted', async () => {
    server.handle((request, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<html><body>Sign in to the gateway (${String(request.headers['x-api-key'])})</body></html>\n`)
    })
    expect(only(await run())).toEqual({
      code: 'EMPTY_RESPONSE',
      message:
        'claude ended the stream without producing anything; it sent lines that are not server-sent events, first "<html><body>Sign in to the gateway ([redacted])</body></html>"',
    })
  })
})
