import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import type { LlmRequest, Message } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import type { AnySessionEvent, MemorySessionPersistence, Session } from '@deepseek-ai/dsh-session'
import { bundleApp } from '@deepseek-ai/dsh-testkit'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { Context } from 'cordis'
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
 * The kit's app (`bundleApp`: the spine bundle, with `ctx.invariants` under
 * policy `throw` and the log-structure, registry-pairing and
 * request-reconstruction companions, a scripted model, memory persistence)
 * with a `test-model` that reports the window and dsh-compaction beside the
 * bundle. The summarizer's requests take their own route (`summary`); the
 * agent's go to `respond`; both are recorded in order.
 */
export async function harness(options: HarnessOptions = {}) {
  const jsonl = options.jsonl
  const app = await bundleApp({
    bundle: AgentSpine,
    bundleConfig: options.defaultModel ? { defaultModel: options.defaultModel } : {},
    models: [{ id: 'test-model', contextWindow: options.window ?? 1_000, maxOutputTokens: options.maxOutput ?? 200 }, ...(options.models ?? [])],
    respond: (request, call) => (options.respond ? options.respond(request, call) : { text: `Answer ${call + 1}.`, usage: false }),
    routes: {
      summary: {
        match: isSummaryRequest,
        respond: (request, call) => (options.summary ? options.summary(request, call) : { text: `Summary #${call + 1}.`, usage: { inputTokens: 50, outputTokens: 5 } }),
      },
    },
    tools: options.tools ?? [],
    ...(options.backend ? { backend: options.backend } : {}),
    ...(jsonl === undefined ? {} : { persistence: (root: Context) => root.plugin(JsonlSessionPersistence, { directory: jsonl }) }),
    plugins: (root) => (options.compaction === false ? [] : [root.plugin(Compaction, options.config ?? {})]),
    agentOptions: options.defaultModel ? {} : { provider: 'scripted', model: 'test-model' },
  })
  // The estimator is dsh-compaction's own service API, so it is set here, before any agent exists.
  if (options.compaction !== false && options.estimator !== 'default') app.root.compaction.setEstimator(options.estimator ?? charEstimator)
  return { ...app, agentRequests: app.answered, summaryRequests: app.routed.summary! }
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
