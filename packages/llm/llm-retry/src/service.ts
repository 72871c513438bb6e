import '@deepseek-ai/dsh-agent'
import type {} from './events'
import Schema from 'schemastery'
import { backoffDelay, sleep } from './backoff'
import { DEFAULT_BUDGETS } from './budgets'
import { Context, Service } from './cordis'

declare module 'cordis' {
  interface Context {
    llmRetry: LlmRetry
  }
}

/**
 * dsh-llm-retry: transient model-failure recovery.
 *
 * It listens on `agent/request-error`. When the failure's code has budget
 * left (budgets count the failures of that code among the turn's consecutive
 * failures, which the loop passes as `priorFailures` and clears on success), it
 * logs an `llm/retry` event, waits an exponential, jittered delay that
 * honours the provider's `retryAfterMs` up to `maxDelayMs`, and answers
 * `{ kind: 'retry' }`: the loop then rebuilds the request from the log in a
 * new step. A cancel during the wait ends it at once without retrying. Codes
 * without budget (`AUTH`, `BAD_REQUEST`, `CONTEXT_OVERFLOW`, …) pass through
 * to later listeners and the default (terminal) decision.
 */
export class LlmRetry extends Service {
  static readonly inject = ['sessions']
  static readonly Config: Schema<LlmRetry.Config> = Schema.object({
    baseDelayMs: Schema.natural().default(500).description('Delay before the first retry (doubles each time).'),
    // A Node timer holds at most 2^31 − 1 ms; a longer wait fires after 1 ms (a retry at once, every time).
    maxDelayMs: Schema.natural().max(2 ** 31 - 1).default(30_000).description('Cap on any single delay, retry-after hints included (at most 2^31 − 1 ms).'),
    budgets: Schema.dict(Schema.natural()).default({}).description('Retries per failure code, over the defaults.'),
  })

  readonly budgets: Readonly<Partial<Record<string, number>>>

  constructor(
    ctx: Context,
    private readonly config: LlmRetry.Config,
  ) {
    super(ctx, 'llmRetry')
    this.budgets = Object.freeze({ ...DEFAULT_BUDGETS, ...(config.budgets ?? {}) })
    ctx.sessions.registerType('llm/retry', { ignorable: true })
    ctx.on('agent/request-error', async (agent, turn, step, _error, failure, prior, signal, next) => {
      const decision = await next()
      if (decision || signal.aborted) return decision
      const budget = this.budgets[failure.code] ?? 0
      let attempt = 0
      for (const earlier of prior) if (earlier.code === failure.code) attempt++
      if (attempt >= budget) return decision
      const delayMs = backoffDelay(attempt, {
        baseDelayMs: this.config.baseDelayMs ?? 500,
        maxDelayMs: this.config.maxDelayMs ?? 30_000,
        retryAfterMs: failure.retryAfterMs,
      })
      agent.session.append('llm/retry', { turn, step, code: failure.code, attempt: attempt + 1, delayMs, message: failure.message })
      return (await sleep(delayMs, signal)) ? { kind: 'retry' } : undefined
    })
  }
}

export namespace LlmRetry {
  export interface Config {
    baseDelayMs?: number
    maxDelayMs?: number
    /** Retries per failure code (e.g. `{ RATE_LIMIT: 8 }`), over `DEFAULT_BUDGETS`. */
    budgets?: Record<string, number>
  }
}
