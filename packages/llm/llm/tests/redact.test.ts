import type { CallId, ContentChunk } from '@deepseek-ai/dsh-llm'
import { ContentRedactor, REDACTED, Secrets, redactUserinfo } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { redactedThrough } from './helpers'

// Fake credentials, built so that no real key appears in the source or the test output.
const key = 'sk-ant-shared-test-0123456789'
const token = 'proxy-token-abcdef'
const secrets = new Secrets(key, { 'X-Proxy-Token': token, 'X-Trace': 'not-a-secret-value' })
const none = new Secrets(undefined, {})

const through = redactedThrough

describe('Secrets.redact: credential shapes that are not this call’s own', () => {
  it.each([
    ['an Anthropic key', 'sk-ant-api03-abcdEFGH'],
    ['an OpenAI-style key', 'sk-proj-abcdefghijklmnop0123'],
    ['a publishable or restricted key', 'rk_live_abcdefghijklmnop0123'],
    ['a Google API key', 'AIzaSyA1234567890abcdefghijklmnopqrstu'],
    ['a Groq key', 'gsk_abcdefghijklmnop0123456789'],
    ['a Hugging Face token', 'hf_abcdefghijklmnopqrstuvwx'],
    ['a GitHub token', 'ghp_abcdefghijklmnopqrstuvwx0123'],
    ['a GitHub fine-grained token', 'github_pat_abcdefghijklmnop0123'],
    ['an xAI key', 'xai-abcdefghijklmnopqrstuvwx0123'],
  ])('%s goes, the words around it stay', (_, credential) => {
    expect(none.redact(`the server said: bad key ${credential}; check it`)).toBe('the server said: bad key [redacted]; check it')
  })

  it('a Bearer or Basic token goes, the scheme word stays, and prose about Bearer authentication is kept', () => {
    expect(none.redact('auth Bearer abc.def-123456 and Basic dXNlcjpwYXNzd29yZA==; a Bearer authentication error')).toBe(
      'auth Bearer [redacted] and Basic [redacted]; a Bearer authentication error',
    )
  })

  it('words that merely start like a key prefix are kept', () => {
    expect(none.redact('ask-ant sk-short hf_x the xai-model')).toBe('ask-ant sk-short hf_x the xai-model')
  })
})

describe('Secrets: the call’s own credentials', () => {
  it('removes the key, secret header values (and their token without the scheme), not other headers', () => {
    const own = new Secrets('plain-key-0001', { Authorization: 'Token abcdef123', 'X-Trace': 'trace-value-1' })
    expect(own.redact('plain-key-0001 / Token abcdef123 / abcdef123 / trace-value-1')).toBe('[redacted] / [redacted] / [redacted] / trace-value-1')
    expect(own.values).toEqual(['Token abcdef123', 'plain-key-0001', 'abcdef123'])
  })

  it('replaces longest first, so a value that contains another goes whole', () => {
    const nested = new Secrets('abcdef', { 'X-Api-Key': 'abcdef-and-more' })
    expect(nested.redactValues('x abcdef-and-more y abcdef z')).toBe(`x ${REDACTED} y ${REDACTED} z`)
  })

  it('ignores values shorter than six characters (not credentials; replacing them would garble text)', () => {
    expect(new Secrets('x', { 'X-Api-Key': 'abc' }).values).toEqual([])
  })

  it('redactValues leaves credential shapes of model text alone; redact removes them', () => {
    const text = `example sk-proj-abcdefghijklmnop0123 and ${key}`
    expect(secrets.redactValues(text)).toBe('example sk-proj-abcdefghijklmnop0123 and [redacted]')
    expect(secrets.redact(text)).toBe('example [redacted] and [redacted]')
  })
})

describe('URL userinfo', () => {
  it('goes from every URL, the scheme, host and path stay, up to the last @ of the authority', () => {
    expect(redactUserinfo('at http://alice:pw@host:8080/v1 and https://tok@en@proxy/x and mailto a@b')).toBe(
      'at http://[redacted]@host:8080/v1 and https://[redacted]@proxy/x and mailto a@b',
    )
    expect(none.redact('see https://user:secret@example.test/path?q=1')).toBe('see https://[redacted]@example.test/path?q=1')
  })
})

describe('Secrets.failure: request ids', () => {
  it('redacts the message and request id, caps the request id at 200 characters, and drops an empty one', () => {
    expect(secrets.failure({ code: 'SERVER', message: `id Bearer ${key}`, requestId: `Bearer ${key}` })).toEqual({
      code: 'SERVER',
      message: 'id Bearer [redacted]',
      requestId: 'Bearer [redacted]',
    })
    expect(secrets.failure({ code: 'SERVER', message: 'x', requestId: 'r'.repeat(500) })).toEqual({ code: 'SERVER', message: 'x', requestId: `${'r'.repeat(200)}…` })
    expect(secrets.failure({ code: 'SERVER', message: 'x', requestId: ' \n ' })).toEqual({ code: 'SERVER', message: 'x' })
  })
})

describe('ContentRedactor: model output across deltas', () => {
  it('a key split across three deltas is replaced, and the text around it arrives whole and in order', () => {
    expect(through(new ContentRedactor(secrets), ['The key is sk-a', 'nt-shared-te', 'st-0123456789.'])).toEqual([
      { type: 'text-delta', index: 0, text: 'The key is ' },
      { type: 'text-delta', index: 0, text: '[redacted].' },
    ])
  })

  it('a held tail that turns out not to be a key is released, at the latest by flush', () => {
    expect(through(new ContentRedactor(secrets), ['see sk-ant', '-other'])).toEqual([
      { type: 'text-delta', index: 0, text: 'see ' },
      { type: 'text-delta', index: 0, text: 'sk-ant-other' },
    ])
    expect(through(new ContentRedactor(secrets), ['ends with sk-ant'])).toEqual([
      { type: 'text-delta', index: 0, text: 'ends with ' },
      { type: 'text-delta', index: 0, text: 'sk-ant' },
    ])
  })

  it('without credentials, chunks pass as they are', () => {
    const chunk: ContentChunk = { type: 'text-delta', index: 0, text: 'sk-ant' }
    const redactor = new ContentRedactor(none)
    expect(redactor.pass(chunk)).toBe(chunk)
    expect(redactor.flush()).toEqual([])
  })

  it('a thinking signature releases its block’s held text with it and is never held back', () => {
    const redactor = new ContentRedactor(secrets)
    expect(redactor.pass({ type: 'reasoning-delta', index: 0, text: 'think sk-ant' })).toEqual({ type: 'reasoning-delta', index: 0, text: 'think ' })
    expect(redactor.pass({ type: 'reasoning-delta', index: 0, text: '', signature: 'sig-1' })).toEqual({
      type: 'reasoning-delta',
      index: 0,
      text: 'sk-ant',
      signature: 'sig-1',
    })
    const bare = { type: 'reasoning-delta', index: 1, text: '', signature: 'sig-2' } as const
    expect(redactor.pass(bare)).toBe(bare)
    expect(redactor.flush()).toEqual([])
  })

  it('a tool call’s first delta keeps its id and name (redacted whole) even when its arguments are held', () => {
    const redactor = new ContentRedactor(secrets)
    expect(redactor.pass({ type: 'tool-call-delta', index: 2, id: 'call_1' as CallId, name: 'shell', argumentsDelta: '{"k":"sk-ant-sh' })).toEqual({
      type: 'tool-call-delta',
      index: 2,
      id: 'call_1',
      name: 'shell',
      argumentsDelta: '{"k":"',
    })
    expect(redactor.pass({ type: 'tool-call-delta', index: 2, argumentsDelta: 'ared-test-0123456789"}' })).toEqual({
      type: 'tool-call-delta',
      index: 2,
      argumentsDelta: '[redacted]"}',
    })
  })
})
