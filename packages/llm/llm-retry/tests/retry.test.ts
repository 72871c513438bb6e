import { describe, expect, it, vi } from 'vitest'
import Retry, { DEFAULT_BUDGETS, backoffDelay } from '@deepseek-ai/dsh-llm-retry'
import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

const failure = (code: LlmFailure['code'], extra: Partial<LlmFailure> = {}): LlmFailure => ({ code, message: `${code} happened`, ...extra })
const retries = (events: readonly AnySessionEvent[]) =>
  events.filter((e) => e.type === 'llm/retry').map((e) => (e as AnySessionEvent & { type: 'llm/retry' }).data)

async function withRetry(script: unknown[], config: Record<string, unknown> = {}) {
  const s = await spine({ model: { script: script as never } })
  await s.root.plugin(Retry, { baseDelayMs: 1, maxDelayMs: 5, ...config })
  return s
}

describe('backoffDelay', () => {
  it('doubles from the base, keeps at least half, and never exceeds the cap', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1000 }
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, options, () => 0))).toEqual([50, 100, 200, 400, 500])
    expect([0, 1, 2, 3, 4].map((n) => backoffDelay(n, options, () => 1))).toEqual([100, 200, 400, 800, 1000])
  })

  it('honours a retry-after hint up to the cap', () => {
    expect(backoffDelay(0, { baseDelayMs: 100, maxDelayMs: 1000, retryAfterMs: 700 }, () => 0)).toBe(700)
    expect(backoffDelay(0, { baseDelayMs: 100, maxDelayMs: 1000, retryAfterMs: 60_000 }, () => 0)).toBe(1000)
  })
})

describe('dsh-llm-retry', () => {
  it('refuses a maxDelayMs longer than a Node timer holds (2^31 − 1 ms: a longer wait fires after 1 ms, retrying at once) and registers nothing', async () => {
    const s = await spine({ model: { script: [] } })
    const error = await Promise.resolve(s.root.plugin(Retry, { maxDelayMs: 2 ** 31 })).then(
      () => undefined,
      (failure: unknown) => failure,
    )
    expect(String((error as Error | undefined)?.message)).toContain('maxDelayMs expected number <= 2147483647 but got 2147483648')
    expect(s.root.get('llmRetry')).toBeUndefined()
    await s.root.plugin(Retry, { maxDelayMs: 2 ** 31 - 1 })
    expect(s.root.get('llmRetry')).toBeDefined()
  })

  it('retries a transient failure in a new step and logs a log-only llm/retry event', async () => {
    const { agent, model } = await withRetry([{ error: failure('SERVER', { status: 503 }) }, 'recovered'])
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).filter((l) => /^(step|turn|llm|assistant\/message)/.test(l))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error SERVER',
      'step/end 1.1',
      'llm/retry',
      'step/start 1.2',
      'assistant/message "recovered" stop',
      'step/end 1.2',
      'turn/end 1 completed',
    ])
    expect(retries(a.session.events)).toEqual([{ turn: 1, step: 1, code: 'SERVER', attempt: 1, delayMs: expect.any(Number), message: 'SERVER happened' }])
    // Never model-visible: the retried request equals the first.
    expect(model.requests[1]!.messages).toEqual(model.requests[0]!.messages)
    expect(a.session.deriveMessages().map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  it('stops at the per-code budget and records one structured failure on turn/end', async () => {
    const limited = failure('RATE_LIMIT', { retryAfterMs: 2 })
    const { agent } = await withRetry([{ error: limited }, { error: limited }, { error: limited }], { budgets: { RATE_LIMIT: 2 } })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(retries(a.session.events).map((r) => [r.code, r.attempt, r.delayMs])).toEqual([
      ['RATE_LIMIT', 1, 2],
      ['RATE_LIMIT', 2, 2],
    ])
    const end = a.session.events.at(-1) as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({ kind: 'error', failure: limited })
  })

  it('does not retry codes without budget (AUTH, BAD_REQUEST, CONTEXT_OVERFLOW, MALFORMED_STREAM, INVALID_CONFIG)', async () => {
    for (const code of ['AUTH', 'BAD_REQUEST', 'CONTEXT_OVERFLOW', 'MALFORMED_STREAM', 'INVALID_CONFIG'] as const) {
      const { agent, model } = await withRetry([{ error: failure(code) }])
      const a = await agent()
      a.followup('go')
      await a.whenIdle()
      expect(model.calls).toBe(1)
      expect(retries(a.session.events)).toEqual([])
      expect(trace(a.session).at(-1)).toBe(`turn/end 1 error ${code}`)
    }
    expect(DEFAULT_BUDGETS).toEqual({ RATE_LIMIT: 5, SERVER: 3, TIMEOUT: 1, TRANSPORT: 3, EMPTY_RESPONSE: 2 })
  })

  it('retries a TIMEOUT once by default, then ends the turn with it', async () => {
    const timeout = failure('TIMEOUT')
    const { agent, model } = await withRetry([{ error: timeout }, { error: timeout }, 'never reached'])
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(model.calls).toBe(2)
    expect(retries(a.session.events).map((r) => [r.code, r.attempt])).toEqual([['TIMEOUT', 1]])
    const end = a.session.events.at(-1) as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({ kind: 'error', failure: timeout })
  })

  it('a cancel during the backoff ends the wait at once and the turn ends aborted', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      const { agent, root } = await spine({ model: { script: [{ error: failure('SERVER') }, 'never'] } })
      await root.plugin(Retry, { baseDelayMs: 60_000, maxDelayMs: 60_000 })
      const a = await agent()
      const waiting = new Promise<void>((resolve) => root.on('session/event', (_s, e) => e.type === 'llm/retry' && resolve()))
      a.followup('go')
      await waiting
      a.cancel({ kind: 'user' })
      await a.whenIdle()
      expect(trace(a.session).at(-1)).toBe('turn/end 1 aborted')
      expect(trace(a.session).filter((l) => l.startsWith('step/start'))).toEqual(['step/start 1.1'])
    } finally {
      vi.useRealTimers()
    }
  })

  it('passes through a decision that a later (inner) listener already made, without waiting or logging', async () => {
    const { agent, root, model } = await withRetry([{ error: failure('AUTH') }, 'ok after re-login'])
    root.on('agent/request-error', async () => ({ kind: 'retry' }))
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(model.calls).toBe(2)
    expect(retries(a.session.events)).toEqual([])
    expect(trace(a.session).at(-1)).toBe('turn/end 1 completed')
  })
})
