import { Context } from 'cordis'
import { describe, expectTypeOf, it } from 'vitest'
import type { Agent, AgentHandle, AgentLoadReport, ContinuationDecision, PreStepDecision, PromptDecision } from '@deepseek-ai/dsh-agent'
import type { LoadedSession } from '@deepseek-ai/dsh-session'
import type { LlmCallConfig, UserMessage } from '@deepseek-ai/dsh-llm'

declare const ctx: Context

describe('agent event typings', () => {
  it('types checkpoint listeners by their mode', () => {
    ctx.on('agent/pre-step', (agent, turn, step, proposed, signal) => {
      expectTypeOf(agent).toEqualTypeOf<Agent>()
      expectTypeOf(turn).toEqualTypeOf<number>()
      expectTypeOf(proposed).toEqualTypeOf<readonly UserMessage[]>()
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>()
      return { kind: 'enter', messages: proposed } satisfies PreStepDecision
    })
    ctx.on('agent/request', async (_agent, _turn, _step, _config, _signal, next) => {
      const config = await next()
      expectTypeOf(config).toEqualTypeOf<LlmCallConfig>()
      return { ...config, reasoningEffort: 'high' }
    })
    ctx.on('agent/prompt-submit', async (_agent, content, _source, _signal, next) => {
      const decision = await next()
      expectTypeOf(decision).toEqualTypeOf<PromptDecision>()
      return content.length ? decision : { kind: 'block', reason: 'empty' }
    })
    ctx.on('agent/turn-continuation', (_agent, _turn, fallback) => {
      expectTypeOf(fallback).toEqualTypeOf<ContinuationDecision>()
      return { kind: 'stop', by: 'budget', terminal: true }
    })
  })

  it("types the load report as the persistence backend's LoadedSession reports it", () => {
    ctx.on('agent/load-report', (agent, report) => {
      expectTypeOf(agent).toEqualTypeOf<Agent>()
      expectTypeOf(report).toEqualTypeOf<AgentLoadReport>()
      expectTypeOf(report.repairs).toEqualTypeOf<LoadedSession['repairs']>()
      expectTypeOf(report.warnings).toEqualTypeOf<LoadedSession['warnings']>()
    })
    expectTypeOf<AgentHandle['loadReport']>().toEqualTypeOf<AgentLoadReport | undefined>()
  })

  it('rejects a listener that returns the wrong decision', () => {
    // @ts-expect-error pre-step decisions are enter/reject, not continue
    ctx.on('agent/pre-step', () => ({ kind: 'continue' }))
    // @ts-expect-error status is 'idle' | 'running'
    ctx.on('agent/status', (_agent, status: 'paused') => void status)
  })
})
