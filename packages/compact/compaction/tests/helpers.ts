import RegistryPairing from '@deepseek-ai/dsh-agent/invariant'
import RequestReconstruction from '@deepseek-ai/dsh-agent-loop/invariant'
import Invariants from '@deepseek-ai/dsh-invariants'
import type { LlmRequest, Message } from '@deepseek-ai/dsh-llm'
import type { Responder, ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'
import LogStructure from '@deepseek-ai/dsh-session/invariant'
import { spine, type SpineOptions } from '@deepseek-ai/dsh-testkit'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import { expect } from 'vitest'
import Compaction, { SUMMARY_SYSTEM_PROMPT, type CompactionConfig, type TokenEstimator } from '../src'

/** One token per character, no overhead, an empty header: sizes a test can add up by hand. */
export const charEstimator: TokenEstimator = {
  message: (message) => {
    let total = 0
    for (const block of message.content) {
      if (block.type === 'text') total += block.text.length
      else if (block.type === 'tool-call') total += block.arguments.length
      else if (block.type === 'tool-result') for (const inner of block.content) total += inner.type === 'text' ? inner.text.length : 0
    }
    return total
  },
  header: () => 0,
}

/** Whether a model request is one of the summarizer's. */
export function isSummaryRequest(request: LlmRequest): boolean {
  return request.system === SUMMARY_SYSTEM_PROMPT
}

export interface HarnessOptions {
  /** The model's context window and output limit (`test-model` of the scripted model). */
  window?: number
  maxOutput?: number
  config?: CompactionConfig
  /** Answers the agent's requests (the summarizer's go to `summary`). */
  respond?: (request: LlmRequest, agentCall: number) => string | ScriptReply | Promise<string | ScriptReply>
  /** Answers the summarizer's requests; default `Summary #n.`. */
  summary?: (request: LlmRequest, summaryCall: number) => string | ScriptReply | Promise<string | ScriptReply>
  tools?: ToolDefinition<any>[]
  estimator?: TokenEstimator | 'default'
  durability?: SpineOptions['durability']
}

/**
 * The testkit's spine (the real loop and a scripted model whose `test-model`
 * reports the window), with `ctx.invariants` (policy `throw`), the log
 * structure, registry pairing and request-reconstruction companions, and
 * dsh-compaction. Requests are split: the summarizer's go to `summary`, the
 * agent's to `respond`; both are recorded in order.
 */
export async function harness(options: HarnessOptions = {}) {
  const agentRequests: LlmRequest[] = []
  const summaryRequests: LlmRequest[] = []
  const respond: Responder = (request) => {
    if (isSummaryRequest(request)) {
      summaryRequests.push(request)
      return options.summary ? options.summary(request, summaryRequests.length - 1) : { text: `Summary #${summaryRequests.length}.`, usage: { inputTokens: 50, outputTokens: 5 } }
    }
    agentRequests.push(request)
    return options.respond ? options.respond(request, agentRequests.length - 1) : { text: `Answer ${agentRequests.length}.`, usage: false }
  }
  const kit = await spine({
    model: {
      models: [{ id: 'test-model', contextWindow: options.window ?? 1_000, maxOutputTokens: options.maxOutput ?? 200 }],
      respond,
    },
    tools: options.tools ?? [],
    ...(options.durability ? { durability: options.durability } : {}),
  })
  const { root } = kit
  await root.plugin(Invariants, { policy: 'throw' })
  await root.plugin(LogStructure)
  await root.plugin(RegistryPairing)
  await root.plugin(RequestReconstruction)
  await root.plugin(Compaction, options.config ?? {})
  if (options.estimator !== 'default') root.compaction.setEstimator(options.estimator ?? charEstimator)
  return {
    ...kit,
    agentRequests,
    summaryRequests,
    /** No invariant found anything, now or on the way. */
    async expectClean() {
      expect(await root.invariants.check()).toEqual([])
      expect(root.invariants.violations).toEqual([])
    },
  }
}

/** Runs one prompt to completion. */
export async function turn(agent: { followup(input: string): unknown; whenIdle(): Promise<void> }, prompt: string): Promise<void> {
  agent.followup(prompt)
  await agent.whenIdle()
}

/** The `compaction/*` events of a log, by type and the fields a test reads. */
export function compactionEvents(session: Session): AnySessionEvent[] {
  return session.events.filter((event) => event.type.startsWith('compaction/'))
}

/** The text of every message of a history, role-prefixed. */
export function texts(messages: readonly Message[]): string[] {
  return messages.map((message) => {
    const parts = message.content.map((block) => {
      if (block.type === 'text') return block.text
      if (block.type === 'tool-call') return `call ${block.name}(${block.arguments})`
      if (block.type === 'tool-result') return `result ${block.content.map((inner) => (inner.type === 'text' ? inner.text : `[${inner.type}]`)).join('')}`
      return `[${block.type}]`
    })
    return `${message.role}: ${parts.join(' | ')}`
  })
}

/** `n` characters of `c`. */
export function chars(n: number, c = 'x'): string {
  return c.repeat(n)
}
