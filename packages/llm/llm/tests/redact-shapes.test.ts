import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
// The shared redactor's contract on stream text; every adapter's use of it over HTTP is tested in its own package.
import { ContentRedactor, Secrets, type ContentChunk, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { redactedThrough } from './helpers'

const key = 'sk-redact-test-0123456789'
const token = 'proxy-token-abcdef'
const secrets = new Secrets(key, { 'X-Proxy-Token': token, 'X-Trace': 'not-a-secret-value' })

const through = redactedThrough

const joined = (chunks: readonly StreamChunk[]) => chunks.map((c) => (c.type === 'text-delta' ? c.text : '')).join('')

describe('Secrets.redact (failure text)', () => {
  it('removes the credential values, Bearer tokens, key shapes and URL userinfo, and keeps the words around them', () => {
    expect(
      secrets.redact(
        `auth Bearer ${key} or ${key}; proxy ${token}; other sk-proj-abcdefghijklmnop0123 and AIzaSyA1234567890abcdefghijklmnopqrstu; ` +
          'Basic dXNlcjpwYXNzd29yZA== at http://alice:pw@host:8080/v1 and https://tok@en@proxy/x; a Bearer authentication error',
      ),
    ).toBe(
      'auth Bearer [redacted] or [redacted]; proxy [redacted]; other [redacted] and [redacted]; ' +
        'Basic [redacted] at http://[redacted]@host:8080/v1 and https://[redacted]@proxy/x; a Bearer authentication error',
    )
  })

  it('does not touch the values of headers that are not credentials', () => {
    expect(secrets.redact('trace not-a-secret-value')).toBe('trace not-a-secret-value')
  })

  it('shortens and redacts a request id, and drops one that is only whitespace', () => {
    expect(secrets.failure({ code: 'SERVER', message: `id Bearer ${key}`, requestId: `Bearer ${key}` })).toEqual({
      code: 'SERVER',
      message: 'id Bearer [redacted]',
      requestId: 'Bearer [redacted]',
    })
    expect(secrets.failure({ code: 'SERVER', message: 'x', requestId: 'r'.repeat(500) }).requestId).toBe(`${'r'.repeat(200)}…`)
    expect(secrets.failure({ code: 'SERVER', message: 'x', requestId: '  ' })).toEqual({ code: 'SERVER', message: 'x' })
  })
})

describe('ContentRedactor (model output)', () => {
  it('without credentials, every chunk passes as it is', () => {
    const redactor = new ContentRedactor(new Secrets(undefined, {}))
    const chunk: ContentChunk = { type: 'text-delta', index: 0, text: 'sk-' }
    expect(redactor.pass(chunk)).toBe(chunk)
    expect(redactor.flush()).toEqual([])
  })

  it('holds back a tail that starts a credential at a word boundary, and releases it when no credential follows', () => {
    const redactor = new ContentRedactor(secrets)
    expect(through(redactor, ['The key is sk', '-redact-te', 'sting done'])).toEqual([
      { type: 'text-delta', index: 0, text: 'The key is ' },
      { type: 'text-delta', index: 0, text: 'sk-redact-testing done' },
    ])
  })

  it('does not hold back prose that merely ends with the first letters of a credential inside a word', () => {
    const redactor = new ContentRedactor(secrets)
    expect(through(redactor, ['Half an ans', 'wer, it has'])).toEqual([
      { type: 'text-delta', index: 0, text: 'Half an ans' },
      { type: 'text-delta', index: 0, text: 'wer, it has' },
    ])
  })

  it('keeps blocks apart: a held tail of one block is released in its own block, in block order', () => {
    const redactor = new ContentRedactor(secrets)
    expect(redactor.pass({ type: 'reasoning-delta', index: 1, text: 'think sk-re' })).toEqual({ type: 'reasoning-delta', index: 1, text: 'think ' })
    expect(redactor.pass({ type: 'tool-call-delta', index: 2, id: 'call_1' as never, name: 'n', argumentsDelta: '{"k":"sk' })).toEqual({
      type: 'tool-call-delta',
      index: 2,
      id: 'call_1',
      name: 'n',
      argumentsDelta: '{"k":"',
    })
    expect(redactor.pass({ type: 'text-delta', index: 0, text: 'plain' })).toEqual({ type: 'text-delta', index: 0, text: 'plain' })
    expect(redactor.pass({ type: 'tool-call-delta', index: 2, argumentsDelta: '-redact-test-0123456789"}' })).toEqual({
      type: 'tool-call-delta',
      index: 2,
      argumentsDelta: '[redacted]"}',
    })
    expect(redactor.flush()).toEqual([{ type: 'reasoning-delta', index: 1, text: 'sk-re' }])
    expect(redactor.flush()).toEqual([])
  })

  it('property: however a text with credentials is split into deltas, the output joins to the redacted text and no delta sequence carries a credential', () => {
    const word = fc.stringMatching(/^[a-z]{0,8}$/)
    const piece = fc.oneof(word, word, fc.constant(key), fc.constant(token), fc.constant(key.slice(0, 5)), fc.constant('s'))
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), (pieces, cuts) => {
        const text = pieces.join(' ')
        const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
        const deltas = [0, ...at].map((from, i) => text.slice(from, at[i] ?? text.length))
        const out = joined(through(new ContentRedactor(secrets), deltas))
        expect(out).toBe(text.split(key).join('[redacted]').split(token).join('[redacted]'))
        expect([out.includes(key), out.includes(token)]).toEqual([false, false])
      }),
    )
  })
})
