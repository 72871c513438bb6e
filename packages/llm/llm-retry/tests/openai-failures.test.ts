import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import Retry from '@deepseek-ai/dsh-llm-retry'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
// The real adapter over real HTTP: how its failure classes meet the default budgets.
import { OpenAiAdapter, type ProviderConfig } from '@deepseek-ai/dsh-llm-openai'
import { FakeProvider, openAiChunk as chunk, openStream, reply, send, spine, sse, trace } from '@deepseek-ai/dsh-testkit'

let server: FakeProvider

beforeEach(async () => {
  server = await FakeProvider.start()
})

afterEach(async () => {
  await server.stop()
})

/** The spine with the OpenAI adapter as provider `fake` and dsh-llm-retry on its default budgets (short delays). */
async function agentOn(provider: Partial<ProviderConfig>, env: Record<string, string> = {}, retry: Record<string, unknown> = { baseDelayMs: 1, maxDelayMs: 5 }) {
  const s = await spine()
  const adapter = new OpenAiAdapter({ name: 'fake', baseUrl: server.url, apiKey: 'sk-retry-e2e-0123456789', ...provider }, { env, now: () => now })
  s.root.llm.registerAdapter(['fake'], adapter)
  await s.root.plugin(Retry, retry)
  return s.agent('a', { provider: 'fake', model: 'test-model' })
}

/** The adapter's clock, for `retry-after` dates. */
const now = Date.parse('2026-12-03T08:00:00Z')
const retries = (events: readonly AnySessionEvent[]) =>
  events.filter((e) => e.type === 'llm/retry').map((e) => (e as AnySessionEvent & { type: 'llm/retry' }).data)

const lifecycle = (events: readonly AnySessionEvent[]) => events.filter((e) => /^(step|turn|llm)\//.test(e.type))

describe('dsh-llm-openai failures under the default retry budgets', () => {
  it('a server that never sends headers: TIMEOUT, retried once, then the turn ends with it', async () => {
    const never = () => {
      // Accepts the request and never answers.
    }
    server.handle(never, never, never)
    const a = await agentOn({ requestTimeoutMs: 20 })
    a.followup('hello')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => /^(step|turn|llm|assistant\/message)/.test(line))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error TIMEOUT',
      'step/end 1.1',
      'llm/retry',
      'step/start 1.2',
      'assistant/message "" error TIMEOUT',
      'step/end 1.2',
      'turn/end 1 error TIMEOUT',
    ])
    expect(a.status).toBe('idle')
  })

  it('two tool calls with one id: MALFORMED_STREAM, not retried, and the logged message is empty', async () => {
    const call = (index: number, name: string) => ({
      tool_calls: [{ index, id: 'call_same', type: 'function', function: { name, arguments: '{"text":"x"}' } }],
    })
    server.handle(sse([chunk(call(0, 'echo')), chunk(call(1, 'echo')), chunk({}, 'tool_calls')]))
    const a = await agentOn({})
    a.followup('hello')
    await a.whenIdle()
    expect(server.requests).toHaveLength(1)
    expect(trace(a.session).filter((line) => /^(step|turn|llm|assistant\/message|tool)/.test(line))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error MALFORMED_STREAM',
      'step/end 1.1',
      'turn/end 1 error MALFORMED_STREAM',
    ])
    expect(a.status).toBe('idle')
  })

  it('an API key that an HTTP header cannot carry: INVALID_CONFIG, nothing sent, not retried, the key nowhere in the log', async () => {
    const key = 'sk-zq\u2014xv-9876543210'
    const a = await agentOn({ apiKey: undefined, apiKeyEnv: 'FAKE_KEY' }, { FAKE_KEY: key })
    a.followup('hello')
    await a.whenIdle()
    expect(server.requests).toEqual([])
    expect(lifecycle(a.session.events).map((e) => e.type)).toEqual(['turn/start', 'step/start', 'step/end', 'turn/end'])
    const end = a.session.events.at(-1) as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({
      kind: 'error',
      failure: {
        code: 'INVALID_CONFIG',
        message:
          'the API key in the FAKE_KEY environment variable contains the non-ASCII character U+2014 at position 6; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break',
      },
    })
    const log = JSON.stringify(a.session.events)
    expect([log.includes('sk-zq'), log.includes('xv-9876543210')]).toEqual([false, false])
  })

  it('a stream cut after it produced text and part of a tool call: TRANSPORT, retried with the same request, and only the retry\'s answer is model-visible', async () => {
    server.handle(
      async (_request, res) => {
        openStream(res)
        await send(res, chunk({ content: 'Half an ans' }))
        await send(res, chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'echo', arguments: '{"te' } }] }))
        res.socket?.destroy()
      },
      sse([chunk({ content: 'The whole answer.' }), chunk({}, 'stop')]),
    )
    const a = await agentOn({})
    a.followup('hello')
    await a.whenIdle()
    expect(trace(a.session).filter((line) => /^(step|turn|llm|assistant\/message|tool)/.test(line))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error TRANSPORT',
      'step/end 1.1',
      'llm/retry',
      'step/start 1.2',
      'assistant/message "The whole answer." stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(a.session.deriveMessages().map((m) => [m.role, m.content])).toEqual([
      ['user', [{ type: 'text', text: 'hello' }]],
      ['assistant', [{ type: 'text', text: 'The whole answer.' }]],
    ])
    expect(server.requests.map((r) => r.raw)).toEqual([server.requests[0]!.raw, server.requests[0]!.raw])
  })

  it('a cancel during a long backoff ends the turn aborted without waiting it out, and no further request is sent', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      server.handle(reply(429, { error: { message: 'slow down' } }, { 'retry-after': '20' }), sse([chunk({ content: 'never' }), chunk({}, 'stop')]))
      const a = await agentOn({}, {}, { baseDelayMs: 60_000, maxDelayMs: 60_000 })
      a.followup('hello')
      await vi.waitFor(() => expect(retries(a.session.events)).toHaveLength(1), { timeout: 20_000 })
      a.cancel({ kind: 'user' })
      // The fake clock never moves: only the cancel can end the wait.
      await a.whenIdle()
      expect(trace(a.session).filter((line) => /^(step|turn|llm)/.test(line))).toEqual([
        'turn/start 1 prompt',
        'step/start 1.1',
        'step/end 1.1',
        'llm/retry',
        'turn/end 1 aborted',
      ])
      expect(server.requests).toHaveLength(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it('the provider\'s retry-after (seconds, HTTP date, retry-after-ms) raises the delay, a day is capped at maxDelayMs, a date in the past or a nonsense value leaves the backoff', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const limited = (headers: Record<string, string>) => reply(429, { error: { message: 'slow down' } }, headers)
      server.handle(
        limited({ 'retry-after': '86400' }),
        limited({ 'retry-after': 'Thu, 03 Dec 2026 08:00:03 GMT' }),
        limited({ 'retry-after': 'Thu, 03 Dec 2026 07:59:00 GMT' }),
        limited({ 'retry-after': 'soon', 'retry-after-ms': '1500' }),
        limited({ 'retry-after': '-5' }),
        sse([chunk({ content: 'ok' }), chunk({}, 'stop')]),
      )
      const a = await agentOn({}, {}, { baseDelayMs: 100, maxDelayMs: 5000, budgets: { RATE_LIMIT: 5 } })
      // Each backoff is waited out on the fake clock as soon as it starts (the event is logged just before the wait).
      a.followup('hello')
      for (let seen = 0; seen < 5; ) {
        await vi.waitFor(() => expect(retries(a.session.events).length).toBeGreaterThan(seen), { timeout: 20_000 })
        seen = retries(a.session.events).length
        vi.advanceTimersByTime(retries(a.session.events).at(-1)!.delayMs)
      }
      await a.whenIdle()
      expect(retries(a.session.events).map((r) => [r.attempt, r.delayMs])).toEqual([
        [1, 5000],
        [2, 3000],
        [3, 200],
        [4, 1500],
        [5, 800],
      ])
      expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
    } finally {
      vi.useRealTimers()
      vi.restoreAllMocks()
    }
  })
})
