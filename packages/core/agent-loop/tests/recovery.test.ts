import { describe, expect, it } from 'vitest'
import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const noChunks = (lines: string[]) => lines.filter((line) => !line.startsWith('assistant/chunk'))
const rateLimited: LlmFailure = { code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 10 }

describe('failure and recovery (R-ERR-1…6)', () => {
  it('a failed provider call writes an empty anchor and closes its step, then request-error decides; the default is terminal', async () => {
    const { agent, root } = await spine({ model: { script: [{ error: rateLimited }] } })
    const a = await agent()
    const seen: unknown[] = []
    root.on('agent/request-error', async (_agent, turn, step, error, failure, prior, signal, next) => {
      seen.push({ turn, step, error: (error as { code?: string }).code, failure, prior, aborted: signal.aborted, stepClosed: trace(a.session).at(-1) })
      return next()
    })
    const errors: unknown[] = []
    root.on('agent/error', (_agent, turn, step, error) => void errors.push({ turn, step, code: (error as { code?: string }).code }))
    a.followup('go')
    await a.whenIdle()
    expect(seen).toEqual([{ turn: 1, step: 1, error: 'RATE_LIMIT', failure: rateLimited, prior: [], aborted: false, stepClosed: 'step/end 1.1' }])
    expect(noChunks(trace(a.session)).slice(3)).toEqual([
      'step/start 1.1',
      'user/message "go"',
      'request/header initial scripted/test-model',
      'assistant/message "" error RATE_LIMIT',
      'step/end 1.1',
      'turn/end 1 error RATE_LIMIT',
    ])
    const end = a.session.events.at(-1) as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({ kind: 'error', failure: rateLimited })
    expect(errors).toEqual([{ turn: 1, step: 1, code: 'RATE_LIMIT' }])
  })

  it('retry rebuilds the request from the log in a new numbered step; prior failures accumulate and success clears them', async () => {
    const { agent, root, model } = await spine({
      model: { script: [{ error: rateLimited }, { text: 'half', throw: { code: 'TRANSPORT', message: 'reset' } }, 'finally', { error: rateLimited }, 'ok'] },
    })
    const priors: string[][] = []
    root.on('agent/request-error', async (_a, _t, _s, _e, _f, prior) => {
      priors.push(prior.map((p) => p.code))
      return { kind: 'retry' }
    })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    a.followup('again')
    await a.whenIdle()
    expect(priors).toEqual([[], ['RATE_LIMIT'], []])
    expect(noChunks(trace(a.session)).filter((l) => /^(step|turn|assistant)/.test(l))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'assistant/message "" error RATE_LIMIT',
      'step/end 1.1',
      'step/start 1.2',
      'assistant/message "" error TRANSPORT',
      'step/end 1.2',
      'step/start 1.3',
      'assistant/message "finally" stop',
      'step/end 1.3',
      'turn/end 1 completed',
      'turn/start 2 prompt',
      'step/start 2.1',
      'assistant/message "" error RATE_LIMIT',
      'step/end 2.1',
      'step/start 2.2',
      'assistant/message "ok" stop',
      'step/end 2.2',
      'turn/end 2 completed',
    ])
    // Each retry sends exactly what the first attempt sent: the failed anchors are not model-visible.
    expect(transcript(model.requests[1]!.messages)).toEqual(transcript(model.requests[0]!.messages))
    expect(transcript(model.requests[2]!.messages)).toEqual(['user: go'])
  })

  it('an abort caused by the turn\'s own cancel never reaches request-error', async () => {
    const { agent, root, model } = await spine()
    let reached = 0
    root.on('agent/request-error', async (_a, _t, _s, _e, _f, _p, _signal, next) => {
      reached++
      return next()
    })
    const a = await agent()
    const call = model.control()
    a.followup('go')
    await call.started
    a.cancel({ kind: 'user' })
    await a.whenIdle()
    expect(reached).toBe(0)
    expect(trace(a.session).at(-1)).toBe('turn/end 1 aborted')
  })

  it('a middleware failure is an ordinary turn failure, not a request error; the loop goes on', async () => {
    const { agent, root, model } = await spine({ model: { script: ['second turn'] } })
    let failing = true
    let requestErrors = 0
    root.on('agent/request-error', async (_a, _t, _s, _e, _f, _p, _signal, next) => {
      requestErrors++
      return next()
    })
    root.on('agent/request', async (_a, _t, _s, config, _signal, next) => {
      if (failing) {
        failing = false
        throw Object.assign(new Error('policy service down'), { code: 'POLICY_DOWN' })
      }
      return next()
    })
    const a = await agent()
    a.followup('first')
    a.followup('second')
    await a.whenIdle()
    expect(requestErrors).toBe(0)
    expect(noChunks(trace(a.session)).filter((l) => /^(step|turn)/.test(l))).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'step/end 1.1',
      'turn/end 1 error POLICY_DOWN',
      'turn/start 2 prompt',
      'step/start 2.1',
      'step/end 2.1',
      'turn/end 2 completed',
    ])
    const end = a.session.events.find((e) => e.type === 'turn/end') as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({ kind: 'error', failure: { code: 'POLICY_DOWN', message: 'policy service down' } })
    expect(transcript(model.requests[0]!.messages)).toEqual(['user: first', 'user: second'])
  })

  it('a step-result failure records an empty anchor, then fails the turn with the original error', async () => {
    const { agent, root } = await spine({ model: { script: [{ toolCalls: [{ name: 'read', arguments: {} }], answer: 'x' }] } })
    root.on('agent/step-result', async () => {
      throw new Error('transform failed')
    })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(-3)).toEqual(['assistant/message "" tool-calls', 'step/end 1.1', 'turn/end 1 error PLUGIN_ERROR'])
    const end = a.session.events.at(-1) as AnySessionEvent & { type: 'turn/end' }
    expect(end.data.reason).toEqual({ kind: 'error', failure: { code: 'PLUGIN_ERROR', message: 'transform failed' } })
  })

  it('a failing llm/stream middleware mid-stream keeps what arrived in an interrupted anchor and fails the turn', async () => {
    const { agent, root } = await spine({ model: { script: ['one two three four'] } })
    root.on('llm/stream', (_call, next) =>
      (async function* () {
        let n = 0
        for await (const chunk of next()) {
          if (++n === 3) throw Object.assign(new Error('middleware broke'), { code: 'MIDDLEWARE' })
          yield chunk
        }
      })(),
    )
    let requestErrors = 0
    root.on('agent/request-error', async (_a, _t, _s, _e, _f, _p, _signal, next) => {
      requestErrors++
      return next()
    })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(requestErrors).toBe(0)
    expect(noChunks(trace(a.session)).slice(-3)).toEqual(['assistant/message "one two" aborted interrupted', 'step/end 1.1', 'turn/end 1 error MIDDLEWARE'])
  })

  it('NO_MODEL when nothing supplies a provider/model', async () => {
    const { agent } = await spine()
    const a = await agent('a', {})
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).slice(-3)).toEqual(['user/message "go"', 'step/end 1.1', 'turn/end 1 error NO_MODEL'])
  })

  it('an invalid reasoning effort is a configuration failure of the turn', async () => {
    const { agent } = await spine({ model: { models: [{ id: 'test-model', reasoningEfforts: ['low'] }] } })
    const a = await agent('a', { provider: 'scripted', model: 'test-model', reasoningEffort: 'extreme' })
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).at(-1)).toBe('turn/end 1 error INVALID_CONFIG')
  })

  it('a malformed listener decision fails the turn with INVALID_DECISION', async () => {
    const { agent, root } = await spine()
    root.on('agent/pre-step', () => ({ kind: 'maybe' }) as never)
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(trace(a.session).slice(-2)).toEqual(['turn/start 1 prompt', 'turn/end 1 error INVALID_DECISION'])
  })

  it('a post-step failure fails the turn after the step is complete', async () => {
    const { agent, root } = await spine({ model: { script: ['fine'] } })
    root.on('agent/post-step', () => {
      throw new Error('observer crashed')
    })
    const a = await agent()
    a.followup('go')
    await a.whenIdle()
    expect(noChunks(trace(a.session)).slice(-3)).toEqual(['assistant/message "fine" stop', 'step/end 1.1', 'turn/end 1 error PLUGIN_ERROR'])
  })
})
