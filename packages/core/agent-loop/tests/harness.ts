import { Context } from 'cordis'
import Agents, { type Agent, type AgentHandle, type AgentOptions } from '@deepseek-ai/dsh-agent'
import AgentLoop, { type Durability } from '@deepseek-ai/dsh-agent-loop'
import Llm, { type ContentBlock } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptedModelOptions } from '@deepseek-ai/dsh-llm-scripted'
import Sessions, { SessionError, SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import Tools, { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { z } from 'zod'

/** A concurrency-safe tool that answers `echo: <text>`. */
export const echo = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ text }) => `echo: ${text}`,
})

export interface SpineOptions {
  model?: ScriptedModelOptions
  maxParallelToolCalls?: number
  tools?: ToolDefinition<any>[]
  /** The loop's `durability` (default: the loop's default, `'step'`). */
  durability?: Durability
}

/** The real spine (no mocks of our packages) with a scripted model registered as provider `scripted`. */
export async function spine(options: SpineOptions = {}) {
  const root = new Context()
  await root.plugin(Llm)
  await root.plugin(Sessions)
  await root.plugin(Tools)
  await root.plugin(SystemPrompt, { identity: 'You are a test agent.', persona: '' })
  await root.plugin(Agents)
  const model = new ScriptedModel(options.model ?? {})
  root.llm.registerAdapter(['scripted'], model)
  for (const tool of options.tools ?? []) root.tools.register(tool)
  const loop = root.plugin(AgentLoop, {
    maxParallelToolCalls: options.maxParallelToolCalls ?? 10,
    agents: [],
    ...(options.durability ? { durability: options.durability } : {}),
  })
  await loop
  const handles: AgentHandle[] = []
  return {
    root,
    model,
    loop,
    async agent(id = 'a', agentOptions: AgentOptions = { provider: 'scripted', model: 'test-model' }): Promise<Agent> {
      const handle = await root.agents.create({ sessionId: SessionId(id), agentOptions })
      handles.push(handle)
      return handle.agent
    },
    handles,
  }
}

function text(content: readonly ContentBlock[]): string {
  return content.map((block) => (block.type === 'text' ? block.text : `[${block.type}]`)).join('')
}

/**
 * A compact, readable line per event, for whole-log assertions. Consecutive
 * `assistant/chunk` events collapse into one `assistant/chunk ×N` line.
 */
export function trace(session: Session, from = 1): string[] {
  const lines: string[] = []
  let chunks = 0
  const flushChunks = () => {
    if (chunks) lines.push(`assistant/chunk ×${chunks}`)
    chunks = 0
  }
  for (const event of session.events.slice(from) as AnySessionEvent[]) {
    if (event.type === 'assistant/chunk') {
      chunks++
      continue
    }
    flushChunks()
    lines.push(describe(event))
  }
  flushChunks()
  return lines
}

function describe(event: AnySessionEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `turn/start ${event.data.turn} ${event.data.trigger.kind}`
    case 'turn/end': {
      const reason = event.data.reason
      const detail =
        reason.kind === 'stopped'
          ? ` by ${reason.by}`
          : reason.kind === 'error'
            ? ` ${reason.failure.code}`
            : reason.kind === 'blocked' && reason.reason !== undefined
              ? ` ${JSON.stringify(reason.reason)}`
              : ''
      return `turn/end ${event.data.turn} ${reason.kind}${detail}`
    }
    case 'step/start':
    case 'step/end':
      return `${event.type} ${event.data.turn}.${event.data.step}`
    case 'user/message':
    case 'steering/message':
      return `${event.type} ${JSON.stringify(text(event.data.message.content))}`
    case 'assistant/message': {
      const data = event.data
      const reason = data.finishReason.kind === 'error' ? `error ${data.finishReason.failure.code}` : data.finishReason.kind
      return `assistant/message ${JSON.stringify(text(data.message.content))} ${reason}${data.interrupted ? ' interrupted' : ''}`
    }
    case 'tool/call':
      return `tool/call ${event.data.name}`
    case 'tool/result':
      return `tool/result ${event.data.error ? event.data.error.code : 'ok'} ${JSON.stringify(text((event.data.message.content[0] as { content: readonly ContentBlock[] }).content))}`
    case 'request/header':
      return `request/header ${event.data.reason} ${event.data.provider}/${event.data.model}${event.data.reasoningEffort ? ` ${event.data.reasoningEffort}` : ''}`
    case 'inbox/enqueue':
      return `inbox/enqueue ${event.data.message.target} ${JSON.stringify(text(event.data.message.content))}`
    case 'inbox/dequeue':
      return 'inbox/dequeue'
    case 'inbox/discard':
      return `inbox/discard ×${event.data.ids.length}`
    case 'inbox/requeue':
      return 'inbox/requeue'
    default:
      return event.type
  }
}

/** A promise with its resolve/reject exposed. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Text of every message in a recorded request, role-prefixed. */
export function transcript(messages: readonly { role: string; content: readonly ContentBlock[] }[]): string[] {
  return messages.map((message) => {
    const parts = message.content.map((block) => {
      if (block.type === 'text') return block.text
      if (block.type === 'tool-call') return `call ${block.name}(${block.arguments})`
      if (block.type === 'tool-result') return `result ${text(block.content)}`
      return `[${block.type}]`
    })
    return `${message.role}: ${parts.join(' | ')}`
  })
}

/** One `session.append` call as `refusingLog` saw it. */
export interface AppendAttempt {
  readonly type: string
  readonly data: unknown
  /** Whether the test made the log refuse it. */
  readonly refused: boolean
}

/**
 * Makes `agent.session` refuse chosen appends the way the log refuses an
 * invalid event: `refuse(type, data, attempt)` is asked for every append
 * (`attempt` is its 0-based number) and `true` throws a `SessionError`
 * (`INVARIANT`) instead of appending. Every attempt is recorded.
 *
 * A loop that retries without end would never give the test back (it spins
 * on microtasks): after `limit` attempts the log refuses everything, marks the
 * agent disposing so that its drain ends, and sets `runaway`, which the test
 * then asserts is false.
 */
export function refusingLog(agent: Agent, refuse: (type: string, data: unknown, attempt: number) => boolean, limit = 5_000) {
  const session = agent.session
  const append = session.append.bind(session)
  const record = { attempts: [] as AppendAttempt[], runaway: false }
  ;(session as { append: Session['append'] }).append = ((type: string, data: unknown) => {
    const attempt = record.attempts.length
    if (attempt >= limit) {
      record.runaway = true
      ;(agent as unknown as { disposing: boolean }).disposing = true
      throw new SessionError('INVARIANT', `the test stopped a runaway loop after ${limit} appends`)
    }
    const refused = refuse(type, data, attempt)
    record.attempts.push({ type, data, refused })
    if (refused) throw new SessionError('INVARIANT', `cannot append ${type} at seq ${session.events.length}: refused by the test`)
    return append(type as never, data as never)
  }) as Session['append']
  return record
}
