/**
 * The dsh spine as a user composes it: llm, sessions, tools, system prompt,
 * agents and the agent loop, with the embedded `ScriptedModel` (zero latency,
 * `record: false`, the fixed `REPORTED_USAGE` on every call) as provider
 * `scripted`, and optionally JSONL persistence.
 * Everything goes through public package entry points.
 */
import { Context } from 'cordis'
import { z } from 'zod'
import Agents, { type Agent, type AgentHandle } from '@deepseek-ai/dsh-agent'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import Llm, { type LlmAdapter, type LlmRequest, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type Responder, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import Sessions, { SessionId } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import Tools, { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { batchedIterator } from '../lib/feed.ts'
import { ANSWER_DELTAS, NOOP_DESCRIPTION, NOOP_TOOL, SLOW_DESCRIPTION, SLOW_TOOL, SLOW_TOOL_MS } from './workload.ts'

export const PROVIDER = 'scripted'
export const MODEL = 'bench-model'

/**
 * The usage every model call of the spine reports: what the peers' feeds
 * report (pi-agent-core's `scriptedStream`, the AI SDK's mock: input 100,
 * output 20). A provider's server reports usage and its client adapter
 * counts nothing, so no subject pays for counting its request; the scripted
 * model's default estimate would walk each request's new messages.
 */
export const REPORTED_USAGE = { inputTokens: 100, outputTokens: 20 } as const

export interface SpineOptions {
  /** Answers every model call. */
  respond: Responder
  tools?: ToolDefinition<any>[]
  /** Mount `@deepseek-ai/dsh-session-jsonl` writing into this directory. */
  jsonlDirectory?: string
  maxParallelToolCalls?: number
  /**
   * Feed the model's chunks `streamBatch` per macrotask through an
   * asynchronous iterator, as a network adapter delivers them (see
   * `lib/feed.ts`); absent: `ScriptedModel`'s in-memory stream, every chunk
   * at hand.
   */
  streamBatch?: number
}

export interface Spine {
  readonly root: Context
  readonly model: ScriptedModel
  /** `ctx.agents.create` with the bench's provider and model. */
  create(id: string): Promise<AgentHandle>
  /** `ctx.agents.resume` (needs `jsonlDirectory`). */
  resume(id: string): Promise<AgentHandle>
  /** Disposes every agent (flushing their sessions) and then the whole context. */
  dispose(): Promise<void>
}

export async function spine(options: SpineOptions): Promise<Spine> {
  const root = new Context()
  // Kept in mount order, disposed in reverse: the loop first, the llm seam last.
  const fibers: Array<{ dispose(): unknown }> = []
  const mount = async (fiber: PromiseLike<unknown> & { dispose(): unknown }) => {
    await fiber
    fibers.push(fiber)
  }
  await mount(root.plugin(Llm))
  await mount(root.plugin(Sessions))
  if (options.jsonlDirectory !== undefined) await mount(root.plugin(JsonlSessionPersistence, { directory: options.jsonlDirectory }))
  await mount(root.plugin(Tools))
  await mount(root.plugin(SystemPrompt, { identity: 'You are a coding agent running a benchmark.', persona: '' }))
  await mount(root.plugin(Agents))
  const model = new ScriptedModel({ record: false, respond: options.respond, usage: REPORTED_USAGE })
  root.llm.registerAdapter([PROVIDER], options.streamBatch === undefined ? model : batchedAdapter(model, options.streamBatch))
  for (const tool of options.tools ?? []) root.tools.register(tool)
  await mount(root.plugin(AgentLoop, { maxParallelToolCalls: options.maxParallelToolCalls ?? 10, agents: [] }))
  const handles = new Set<AgentHandle>()
  const agentOptions = { provider: PROVIDER, model: MODEL }
  // The caller's handle forgets the agent once disposed, so a released agent's memory can be collected.
  const track = (handle: AgentHandle): AgentHandle => {
    handles.add(handle)
    return {
      agent: handle.agent,
      dispose: async () => {
        handles.delete(handle)
        await handle.dispose()
      },
    }
  }
  return {
    root,
    model,
    async create(id) {
      return track(await root.agents.create({ sessionId: SessionId(id), agentOptions }))
    },
    async resume(id) {
      return track(await root.agents.resume({ resumeSessionId: SessionId(id), agentOptions }))
    },
    async dispose() {
      for (const handle of [...handles]) await handle.dispose()
      handles.clear()
      for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
    },
  }
}

/**
 * `model` behind an adapter that hands its chunks on `size` per macrotask
 * through a pull-based asynchronous iterator only, as an adapter reading a
 * network response does: the first chunk of each batch with a promise, the
 * rest plainly, exactly as dsh's HTTP adapters hand out the chunks of one
 * network read (`BatchedChunks`, see `lib/feed.ts`). It offers no synchronous
 * view, so `ctx.llm` takes its ordinary asynchronous path. The chunks, the
 * abort check before each and the reported usage are the scripted model's
 * own.
 */
function batchedAdapter(model: ScriptedModel, size: number): LlmAdapter {
  return {
    stream(options) {
      const chunks = model.stream(options) as AsyncIterable<StreamChunk> & Partial<Iterable<StreamChunk>>
      if (typeof chunks[Symbol.iterator] !== 'function') throw new Error('the bench feeds in batches only a scripted model whose chunks are at hand (no delay, a synchronous responder)')
      return batchedIterator(chunks[Symbol.iterator]!(), size)
    },
    resolveModel: (id) => model.resolveModel(id),
  }
}

/** Runs one ordinary turn: a follow-up, then wait until the loop is idle again. */
export async function turn(agent: Agent, text: string): Promise<void> {
  agent.followup(text)
  await agent.whenIdle()
}

/** True when the last message of the request is a tool result: the model answers; else it calls tools. */
export function afterToolResults(request: LlmRequest): boolean {
  const last = request.messages[request.messages.length - 1]
  return last !== undefined && last.content.some((block) => block.type === 'tool-result')
}

const ANSWER: ScriptReply = { text: ANSWER_DELTAS }

/** Every call answers with the 20-delta text. */
export const answerResponder: Responder = () => ANSWER

/** A tool step of `count` calls of `tool`, then the 20-delta answer once the results are in. */
export function toolRoundResponder(tool: string, count: number): Responder {
  const calls: ScriptReply = { toolCalls: Array.from({ length: count }, (_, n) => ({ name: tool, arguments: { n } })) }
  return (request) => (afterToolResults(request) ? ANSWER : calls)
}

const args = z.object({ n: z.number() })

/** The concurrency-safe no-op tool, declared the documented way (`defineTool` with a zod schema). */
export const noopTool = defineTool({
  name: NOOP_TOOL,
  description: NOOP_DESCRIPTION,
  parameters: args,
  isConcurrencySafe: () => true,
  execute: () => 'ok',
})

/** The concurrency-safe tool that takes `SLOW_TOOL_MS` of wall time. */
export const slowTool = defineTool({
  name: SLOW_TOOL,
  description: SLOW_DESCRIPTION,
  parameters: args,
  isConcurrencySafe: () => true,
  execute: () => new Promise<string>((resolve) => setTimeout(() => resolve('ok'), SLOW_TOOL_MS)),
})

/** The resume workload: a step of `count` calls of `tool`, then an answer of `answerDeltas` text deltas. */
export function resumeResponder(tool: string, count: number, answerDeltas: number): Responder {
  const answer: ScriptReply = { text: Array.from({ length: answerDeltas }, (_, i) => `w${i} `) }
  const calls: ScriptReply = { toolCalls: Array.from({ length: count }, (_, n) => ({ name: tool, arguments: { n } })) }
  return (request) => (afterToolResults(request) ? answer : calls)
}
