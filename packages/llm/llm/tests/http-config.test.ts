import {
  apiKeyCharacterProblem,
  definedFields,
  HTTP_HEADER_NAME,
  headerValueProblem,
  jsonRequestBody,
  LlmError,
  lookUpApiKey,
  parseBaseUrl,
  preflightCall,
} from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'

describe('parseBaseUrl', () => {
  it('accepts http(s) URLs without trailing slashes, refuses others and any userinfo without quoting it', () => {
    expect([
      parseBaseUrl('https://api.example.com/v1/'),
      parseBaseUrl('http://127.0.0.1:8000'),
      parseBaseUrl('ftp://user:hunter2@host/v1'),
      parseBaseUrl(undefined),
      parseBaseUrl(42),
      parseBaseUrl('https://user:hunter2@proxy.example.com/openai/v1/'),
      parseBaseUrl('http://token@host:9/'),
    ]).toEqual([
      { ok: true, baseUrl: 'https://api.example.com/v1' },
      { ok: true, baseUrl: 'http://127.0.0.1:8000' },
      { ok: false, problem: 'not-http', given: 'ftp://[redacted]@host/v1' },
      { ok: false, problem: 'not-http', given: null },
      { ok: false, problem: 'not-http', given: 42 },
      { ok: false, problem: 'userinfo', shown: 'https://[redacted]@proxy.example.com/openai/v1/' },
      { ok: false, problem: 'userinfo', shown: 'http://[redacted]@host:9/' },
    ])
  })
})

describe('API keys', () => {
  it('locates the first character a key cannot hold, never returning the key', () => {
    expect(['sk-fine~KEY', 'sk a', 'sk-\nb', 'sk-\u2013c', 'sk-\u0001d', 'sk-\u007f', 'sk-😀'].map(apiKeyCharacterProblem)).toEqual([
      undefined,
      { position: 3, codePoint: 0x20, kind: 'space' },
      { position: 4, codePoint: 0x0a, kind: 'line-break' },
      { position: 4, codePoint: 0x2013, kind: 'non-ascii' },
      { position: 4, codePoint: 0x01, kind: 'control' },
      { position: 4, codePoint: 0x7f, kind: 'non-ascii' },
      { position: 4, codePoint: 0x1f600, kind: 'non-ascii' },
    ])
  })

  it('takes the configured key first, else the trimmed environment variable at each call, with its source and problem', () => {
    const problem = (k: string) => (k.includes('!') ? 'has a bang' : undefined)
    const env: Record<string, string | undefined> = { KEY: '  sk-env  ', BANG: 'sk!', BLANK: '   ' }
    expect([
      lookUpApiKey({ apiKey: 'sk-config', apiKeyEnv: 'KEY' }, 'p', env, problem),
      lookUpApiKey({ apiKeyEnv: 'KEY' }, 'p', env, problem),
      lookUpApiKey({ apiKeyEnv: 'BANG' }, 'p', env, problem),
      lookUpApiKey({ apiKeyEnv: 'BLANK' }, 'p', env, problem),
      lookUpApiKey({ apiKeyEnv: 'UNSET' }, 'p', env, problem),
      lookUpApiKey({}, 'p', env, problem),
    ]).toEqual([
      { key: 'sk-config', source: 'the apiKey of provider "p"' },
      { key: 'sk-env', source: 'the KEY environment variable', problem: undefined },
      { key: 'sk!', source: 'the BANG environment variable', problem: 'has a bang' },
      { missing: 'BLANK' },
      { missing: 'UNSET' },
      {},
    ])
  })

  it('refuses a call before sending: no model, then an unset key variable, then an unusable key', () => {
    expect([
      preflightCall('p', undefined, { missing: 'KEY' }),
      preflightCall('p', 'm', { missing: 'KEY' }),
      preflightCall('p', 'm', { key: 'sk!', source: 'the BANG environment variable', problem: 'has a bang' }),
      preflightCall('p', 'm', {}),
    ]).toEqual([
      { ok: false, failure: { code: 'INVALID_CONFIG', message: 'no model given for provider "p", and it has no defaultModel' } },
      { ok: false, failure: { code: 'AUTH', message: 'the KEY environment variable is not set; export the API key for provider "p" there, or configure apiKey' } },
      { ok: false, failure: { code: 'INVALID_CONFIG', message: 'the API key in the BANG environment variable has a bang' } },
      { ok: true, model: 'm' },
    ])
  })
})

describe('headers, bodies and merged config', () => {
  it('checks header names and values without quoting the value', () => {
    expect([HTTP_HEADER_NAME.test('x-api-key'), HTTP_HEADER_NAME.test('bad header'), HTTP_HEADER_NAME.test('')]).toEqual([true, false, false])
    expect(['token-é', 'a\r\nb', 'nul\0', 'quote “x”'].map(headerValueProblem)).toEqual([
      undefined,
      'contains a line break or NUL at position 2',
      'contains a line break or NUL at position 4',
      'contains the character U+201C at position 7, which an HTTP header cannot carry',
    ])
  })

  it('encodes a body as JSON, keeps an LlmError refusal, and turns an unencodable value into BAD_REQUEST', () => {
    const refusal = new LlmError({ code: 'BAD_REQUEST', message: 'cannot send a video block' })
    expect([
      jsonRequestBody('p', () => ({ a: [1, 'b'] })),
      jsonRequestBody('p', () => {
        throw refusal
      }),
      jsonRequestBody('p', () => ({ n: 1n })),
    ]).toEqual([
      { ok: true, body: '{"a":[1,"b"]}' },
      { ok: false, failure: { code: 'BAD_REQUEST', message: 'cannot send a video block' } },
      { ok: false, failure: { code: 'BAD_REQUEST', message: expect.stringMatching(/^the request for p cannot be encoded as JSON: .*BigInt/) } },
    ])
  })

  it('sends a lone surrogate (a string cut inside an emoji by some tool) as U+FFFD: strict parsers refuse the escape JSON.stringify writes for it, and the message stays in history for every later request', () => {
    const cut = '😀'.slice(0, 1)
    const bodies = [
      jsonRequestBody('p', () => ({ text: `tail ${cut}` })),
      jsonRequestBody('p', () => ({ text: `${'😀'.slice(1)}head`, pair: '😀' })),
      jsonRequestBody('p', () => ({ text: `\\ud83d is six characters, ${cut}` })),
    ]
    expect(bodies).toEqual([
      { ok: true, body: '{"text":"tail \\ufffd"}' },
      { ok: true, body: '{"text":"\\ufffdhead","pair":"😀"}' },
      { ok: true, body: '{"text":"\\\\ud83d is six characters, \\ufffd"}' },
    ])
    expect(bodies.map((encoded) => encoded.ok && JSON.parse(encoded.body).text)).toEqual(['tail \ufffd', '\ufffdhead', '\\ud83d is six characters, \ufffd'])
  })

  it('keeps only the fields a user gave', () => {
    expect(definedFields({ a: 1, b: undefined, c: null, d: '', e: false })).toEqual({ a: 1, d: '', e: false })
  })
})
