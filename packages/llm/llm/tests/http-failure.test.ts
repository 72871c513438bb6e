import {
  classifyHttpFailure,
  HttpExchange,
  Secrets,
  retryAfterMs,
  type HttpFailureContext,
  type HttpFailureDialect,
  type LlmFailure,
} from '@deepseek-ai/dsh-llm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalServer, reply } from './http-server'

const key = 'sk-failure-test-key-0123456789abcdef'
const now = Date.parse('2026-12-02T00:00:00Z')
const context: HttpFailureContext = {
  provider: 'local',
  model: 'm1',
  baseUrl: 'http://127.0.0.1:1',
  secrets: new Secrets(key, {}),
  apiKeySource: 'the LOCAL_KEY environment variable',
  now: () => now,
}

/** A provider whose errors are `{ "error": { "message", "type" } }`, with every hook of a dialect set. */
const dialect: HttpFailureDialect = {
  readError(body) {
    try {
      const error = (JSON.parse(body) as { error?: { message?: string; type?: string } }).error
      if (!error) return undefined
      return { said: [error.message, error.type].filter(Boolean).join('; '), words: `${error.message ?? ''} ${error.type ?? ''}` }
    } catch {
      return undefined
    }
  },
  requestIdHeaders: ['request-id', 'x-request-id'],
  millisecondsHeader: 'retry-after-ms',
  contextOverflow: /prompt is too long/i,
  forbidden: 'refused access',
  isBilling: (status, words) => status === 402 || (status === 429 && /quota/.test(words)),
  billingAdvice: '; retrying will not help.',
  timeoutStatuses: [408, 504],
  isOverloaded: (status, words) => status === 529 || /overloaded/.test(words),
  notFound: ({ words, http, context }) => `${context.provider} has no ${/model/.test(words) ? 'such model' : 'such path'} (${http}).`,
}

/** The bare dialect: every optional hook left to its default. */
const bare: HttpFailureDialect = { readError: () => undefined, requestIdHeaders: ['x-request-id'], contextOverflow: /too long/, billingAdvice: '.' }

let server: LocalServer
beforeAll(async () => {
  server = await LocalServer.start()
})
afterAll(async () => {
  await server.stop()
})

/** Sends one request to the local server, which answers with `status`, `body` and `headers`; classifies the real answer. */
async function answered(status: number, body: string, headers: Record<string, string> = {}, using = dialect, about = context): Promise<LlmFailure> {
  server.answer(reply(status, body, headers))
  const exchange = new HttpExchange(undefined, 'local', { requestTimeoutMs: 20_000, idleTimeoutMs: 20_000 })
  try {
    const response = await exchange.request(server.url, { method: 'POST', body: '{}' })
    return classifyHttpFailure(response.status, response.headers, await exchange.text(response), about, using)
  } finally {
    exchange.close()
  }
}

const error = (message: string, type = 'error') => JSON.stringify({ error: { message, type } })

describe('classifyHttpFailure: the common ladder with a dialect', () => {
  it('classifies each status into its typed code, with the provider words, status and request id', async () => {
    const got = [
      await answered(401, error('invalid x-api-key', 'authentication_error'), { 'request-id': 'req_1', 'x-request-id': 'req_2' }),
      await answered(403, error('no access')),
      await answered(402, error('pay up')),
      await answered(429, error('monthly quota used up')),
      await answered(408, error('slow')),
      await answered(504, error('gateway timeout')),
      await answered(529, error('busy', 'overloaded_error')),
      await answered(500, 'Internal Server Error'),
      await answered(413, error('too big')),
      await answered(400, error('prompt is too long: 300000 tokens')),
      await answered(404, error('model m1 not found')),
      await answered(404, 'Cannot POST /x'),
      await answered(422, error('bad field')),
      await answered(302, ''),
    ]
    expect(got).toEqual([
      { code: 'AUTH', status: 401, requestId: 'req_1', message: 'local refused the credentials (HTTP 401: invalid x-api-key; authentication_error). Check the LOCAL_KEY environment variable.' },
      { code: 'AUTH', status: 403, message: 'local refused access (HTTP 403: no access; error). Check the LOCAL_KEY environment variable.' },
      { code: 'AUTH', status: 402, message: 'local refused the call for billing reasons (HTTP 402: pay up; error); retrying will not help.' },
      { code: 'AUTH', status: 429, message: 'local refused the call for billing reasons (HTTP 429: monthly quota used up; error); retrying will not help.' },
      { code: 'TIMEOUT', status: 408, message: 'local timed out the request (HTTP 408: slow; error).' },
      { code: 'TIMEOUT', status: 504, message: 'local timed out the request (HTTP 504: gateway timeout; error).' },
      { code: 'SERVER', status: 529, message: 'local is overloaded (HTTP 529: busy; overloaded_error); try again shortly.' },
      { code: 'SERVER', status: 500, message: 'local had a server error (HTTP 500: Internal Server Error); try again later.' },
      { code: 'CONTEXT_OVERFLOW', status: 413, message: 'the request does not fit the context window of local/m1 (HTTP 413: too big; error). Shorten or compact the history.' },
      { code: 'CONTEXT_OVERFLOW', status: 400, message: 'the request does not fit the context window of local/m1 (HTTP 400: prompt is too long: 300000 tokens; error). Shorten or compact the history.' },
      { code: 'BAD_REQUEST', status: 404, message: 'local has no such model (HTTP 404: model m1 not found; error).' },
      { code: 'BAD_REQUEST', status: 404, message: 'local has no such path (HTTP 404: Cannot POST /x).' },
      { code: 'BAD_REQUEST', status: 422, message: 'local rejected the request for m1 (HTTP 422: bad field; error).' },
      { code: 'UNKNOWN', status: 302, message: 'local answered with unexpected HTTP 302: no details' },
    ])
  })

  it('without the optional hooks: 403 reads like 401, only 402 is billing, 504 and 529 are server errors, 404 is a plain 4xx', async () => {
    const noKey = { ...context, apiKeySource: undefined }
    expect([
      await answered(403, 'forbidden', {}, bare, noKey),
      await answered(429, 'quota', {}, bare),
      await answered(504, 'overloaded', {}, bare),
      await answered(529, 'overloaded', {}, bare),
      await answered(404, 'nothing here', {}, bare),
    ]).toEqual([
      { code: 'AUTH', status: 403, message: 'local refused the credentials (HTTP 403: forbidden). The provider has no API key configured (set apiKey or apiKeyEnv).' },
      { code: 'RATE_LIMIT', status: 429, message: 'local is rate limiting requests (HTTP 429: quota).' },
      { code: 'SERVER', status: 504, message: 'local had a server error (HTTP 504: overloaded); try again later.' },
      { code: 'SERVER', status: 529, message: 'local had a server error (HTTP 529: overloaded); try again later.' },
      { code: 'BAD_REQUEST', status: 404, message: 'local rejected the request for m1 (HTTP 404: nothing here).' },
    ])
  })

  it('quotes the provider redacted and shortened: the key, a Bearer token and URL userinfo never reach the message', async () => {
    const echo = `bad key ${key}, header Bearer abcdefghijklmnop1234, proxy http://user:pw@proxy.example/ ${'x'.repeat(400)}`
    const failure = await answered(401, error(echo))
    expect(failure.message).toMatch(/^local refused the credentials \(HTTP 401: bad key \[redacted\], header Bearer \[redacted\], proxy http:\/\/\[redacted\]@proxy\.example\/ x+…\)/)
    expect(failure.message).not.toContain(key)
    expect(failure.message).not.toContain('pw@')
  })
})

describe('retryAfterMs: the retry hint of a real answer', () => {
  it('reads seconds, fractional seconds, an HTTP date (from now, never negative) and a milliseconds header that wins', async () => {
    const later = new Date(now + 7_000).toUTCString()
    const earlier = new Date(now - 7_000).toUTCString()
    const hints = [
      await answered(429, error('slow down'), { 'retry-after': '3' }),
      await answered(429, error('slow down'), { 'retry-after': '1.5' }),
      await answered(429, error('slow down'), { 'retry-after': later }),
      await answered(503, error('busy'), { 'retry-after': earlier }),
      await answered(429, error('slow down'), { 'retry-after': '3', 'retry-after-ms': '250.5' }),
      await answered(429, error('slow down'), { 'retry-after': 'soon' }),
      await answered(429, error('slow down')),
    ].map((f) => f.retryAfterMs)
    expect(hints).toEqual([3_000, 1_500, 7_000, 0, 251, undefined, undefined])
  })

  it('a number too long for a double is no usable hint (an Infinity wait would make a failure the session log refuses)', () => {
    const endless = '9'.repeat(400)
    const hints = [
      retryAfterMs(new Headers({ 'retry-after': endless }), now),
      retryAfterMs(new Headers({ 'retry-after': '4', 'retry-after-ms': endless }), now, { millisecondsHeader: 'retry-after-ms' }),
    ]
    expect(hints).toEqual([undefined, 4_000])
  })

  it('states the wait in a RATE_LIMIT message', async () => {
    expect(await answered(429, error('slow down'), { 'retry-after': '2' })).toEqual({
      code: 'RATE_LIMIT',
      status: 429,
      retryAfterMs: 2_000,
      message: 'local is rate limiting requests (HTTP 429: slow down; error). The provider asks to wait 2000 ms.',
    })
  })

  it('ignores a milliseconds header nobody configured, and a non-numeric one', () => {
    const headers = new Headers({ 'retry-after': '4', 'retry-after-ms': '100' })
    const odd = new Headers({ 'retry-after': '4', 'retry-after-ms': 'later' })
    expect([retryAfterMs(headers, now), retryAfterMs(headers, now, { millisecondsHeader: 'retry-after-ms' }), retryAfterMs(odd, now, { millisecondsHeader: 'retry-after-ms' })]).toEqual([
      4_000, 100, 4_000,
    ])
  })
})
