import type { Agent, AgentHandle } from '@deepseek-ai/dsh-agent'
import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import type { LlmRequest, Message } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type Responder, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { memoryPersistence, MemorySessionPersistence, SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import { Context } from 'cordis'
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
  /** More models of the scripted provider (e.g. a summarizer with a smaller window). */
  models?: { id: string; contextWindow: number; maxOutputTokens: number }[]
  config?: CompactionConfig
  /** Answers the agent's requests (the summarizer's go to `summary`). */
  respond?: (request: LlmRequest, agentCall: number) => string | ScriptReply | Promise<string | ScriptReply>
  /** Answers the summarizer's requests; default `Summary #n.`. */
  summary?: (request: LlmRequest, summaryCall: number) => string | ScriptReply | Promise<string | ScriptReply>
  tools?: ToolDefinition<any>[]
  estimator?: TokenEstimator | 'default'
  /** Sessions persist here (memory); pass `previous.backend.reopen()` to restart after a crash. */
  backend?: MemorySessionPersistence
  /** Persist with dsh-session-jsonl in this directory instead of memory. */
  jsonl?: string
  /** Mount dsh-compaction (default true): `false` is an app that does not know it. */
  compaction?: boolean
  /**
   * The spine's default model (dsh-agent-default-model); when set, agents are
   * created naming no provider/model, as the demo creates them.
   */
  defaultModel?: { provider: string; model: string }
}

/**
 * The app as the demo composes it: the spine bundle (dsh-agent-spine: the
 * real loop, with `ctx.invariants` under policy `throw` and the log-structure,
 * registry-pairing and request-reconstruction companions), a scripted model
 * whose `test-model` reports the window, memory persistence, and
 * dsh-compaction beside the bundle. Requests are split: the summarizer's go
 * to `summary`, the agent's to `respond`; both are recorded in order.
 *
 * (The request-reconstruction companion lives in dsh-agent-loop, which a
 * plugin may not depend on, even for tests; the bundle mounts it.)
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
  const root = new Context()
  const spine = root.plugin(AgentSpine, {
    agents: [],
    systemPrompt: { identity: 'You are a test agent.', persona: '' },
    invariants: { policy: 'throw' },
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
    ...(options.defaultModel ? { defaultModel: options.defaultModel } : {}),
  })
  await spine
  const model = new ScriptedModel({
    models: [{ id: 'test-model', contextWindow: options.window ?? 1_000, maxOutputTokens: options.maxOutput ?? 200 }, ...(options.models ?? [])],
    respond,
  })
  root.llm.registerAdapter(['scripted'], model)
  for (const tool of options.tools ?? []) root.tools.register(tool)
  const backend = options.backend ?? new MemorySessionPersistence()
  const persistence = options.jsonl === undefined ? root.plugin(memoryPersistence, { backend }) : root.plugin(JsonlSessionPersistence, { directory: options.jsonl })
  await persistence
  const compaction = options.compaction === false ? undefined : root.plugin(Compaction, options.config ?? {})
  await compaction
  if (compaction && options.estimator !== 'default') root.compaction.setEstimator(options.estimator ?? charEstimator)
  const handles: AgentHandle[] = []
  const agentOptions = options.defaultModel ? {} : { provider: 'scripted', model: 'test-model' }
  return {
    root,
    model,
    backend,
    handles,
    agentRequests,
    summaryRequests,
    /** Creates an agent on session `id`. */
    async agent(id = 'a'): Promise<Agent> {
      const handle = await root.agents.create({ sessionId: SessionId(id), agentOptions })
      handles.push(handle)
      return handle.agent
    },
    /** Resumes session `id` from the backend. */
    async resume(id = 'a'): Promise<Agent> {
      const handle = await root.agents.resume({ resumeSessionId: SessionId(id), agentOptions })
      handles.push(handle)
      return handle.agent
    },
    /** No invariant found anything, now or on the way. */
    async expectClean() {
      expect(await root.invariants.check()).toEqual([])
      expect(root.invariants.violations).toEqual([])
    },
    /** Disposes the agents (their sessions flush), then the app. */
    async dispose() {
      for (const handle of handles.splice(0)) await handle.dispose()
      await compaction?.dispose()
      await persistence.dispose()
      await spine.dispose()
    },
  }
}

/** What `harness()` resolves to. */
export type Harness = Awaited<ReturnType<typeof harness>>

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
