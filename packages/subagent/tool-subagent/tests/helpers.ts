import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import type { ContentBlock, GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import Permissions from '@deepseek-ai/dsh-permissions'
import type { AnySessionEvent, MemorySessionPersistence, Session } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import Subagents, { type AgentTypeConfig, type SubagentsConfig } from '@deepseek-ai/dsh-subagents'
import Tasks from '@deepseek-ai/dsh-tasks'
import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { bundleApp, deferred, echo, type Deferred } from '@deepseek-ai/dsh-testkit'
import { z } from 'zod'
import type { Context } from 'cordis'
import WorkspaceTools from '@deepseek-ai/dsh-workspace-tools'
import ToolSubagent from '../src'

/** A read-only tool, safe to overlap: `look { at }` answers `saw <at>`. */
export const look = defineTool({
  name: 'look',
  description: 'Looks at something.',
  parameters: z.object({ at: z.string() }),
  effect: 'read',
  isConcurrencySafe: () => true,
  execute: ({ at }) => `saw ${at}`,
})

/** A writing tool: `note { text }` answers `noted <text>`. */
export const note = defineTool({
  name: 'note',
  description: 'Writes a note.',
  parameters: z.object({ text: z.string() }),
  effect: 'write',
  execute: ({ text }) => `noted ${text}`,
})

/** A read-only type (the demo's explore agent, on the test's tools). */
export const explore: AgentTypeConfig = {
  name: 'explore',
  description: 'Reads and searches; changes nothing.',
  systemPrompt: 'You explore. Report what you found.',
  tools: ['look'],
}

/** A type that may write. */
export const writer: AgentTypeConfig = {
  name: 'writer',
  description: 'Writes notes.',
  systemPrompt: 'You write notes.',
  tools: ['look', 'note'],
}

/** What a responder is given: the request, with the call's signal (the scripted model passes its generate options). */
export type Request = GenerateOptions

export type Responder = (request: Request, who: string) => string | ScriptReply | Promise<string | ScriptReply>

export interface HarnessOptions {
  /** Answers every model call; `who` is `parent`, or the child's first prompt text. */
  respond: Responder
  types?: AgentTypeConfig[]
  subagents?: Omit<SubagentsConfig, 'types'>
  tools?: ToolDefinition<any>[]
  /** Mount dsh-permissions with this config. */
  permissions?: Record<string, unknown>
  /** Persist with dsh-session-jsonl here (else memory, in `backend`). */
  jsonl?: string
  backend?: MemorySessionPersistence
  maxParallelToolCalls?: number
  /** Mount dsh-workspace-tools on this directory (shell unconfined, nothing asks). */
  workspace?: string
}

/** The first user message's text of a request: for a child, its prompt. */
export function promptOf(request: Pick<Request, 'messages'>): string {
  const first = request.messages.find((message) => message.role === 'user')
  return first ? text(first) : ''
}

function text(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

/**
 * The app as the demo composes it (the kit's `bundleApp`): the spine bundle
 * (invariants under `throw`), a scripted model answering through `respond`,
 * persistence, and dsh-tasks, dsh-subagents (the `types`) and
 * dsh-tool-subagent beside the bundle.
 */
export async function harness(options: HarnessOptions) {
  const jsonl = options.jsonl
  const app = await bundleApp({
    bundle: AgentSpine,
    bundleConfig: { maxParallelToolCalls: options.maxParallelToolCalls ?? 10 },
    // The scripted model hands its responder the generate options (the signal included), typed as the request.
    respond: (request) => options.respond(request, String(request.sessionId).includes('-sub-') ? promptOf(request) : 'parent'),
    tools: options.tools ?? [look, note, echo],
    ...(options.backend ? { backend: options.backend } : {}),
    ...(jsonl !== undefined ? { persistence: (root: Context) => root.plugin(JsonlSessionPersistence, { directory: jsonl }) } : {}),
    plugins: (root) => [
      ...(options.workspace !== undefined ? [root.plugin(WorkspaceTools, { root: options.workspace, askBefore: [], shell: { sandbox: 'off' } })] : []),
      ...(options.permissions ? [root.plugin(Permissions, { userDirectory: false, ...options.permissions })] : []),
      root.plugin(Tasks),
      root.plugin(Subagents, { ...options.subagents, types: options.types ?? [explore, writer] }),
      root.plugin(ToolSubagent),
    ],
  })
  return { ...app, agent: (id = 'p') => app.agent(id), resume: (id = 'p') => app.resume(id) }
}

export type Harness = Awaited<ReturnType<typeof harness>>

/** A `task` tool call reply. */
export function taskCall(args: { description: string; prompt: string; agentType?: string; background?: boolean }, id?: string): ScriptReply {
  return { toolCalls: [{ ...(id ? { id } : {}), name: 'task', arguments: args }] }
}

/** The `tool/result` texts of a log, in order, with their codes. */
export function toolResults(session: Session): string[] {
  return (session.events as AnySessionEvent[])
    .filter((event): event is Extract<AnySessionEvent, { type: 'tool/result' }> => event.type === 'tool/result')
    .map((event) => {
      const block = event.data.message.content[0] as Extract<ContentBlock, { type: 'tool-result' }>
      return `${event.data.error?.code ?? 'ok'}: ${block.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}`
    })
}

/** The events of the given types, as `type data` lines with run ids and session ids made stable. */
export function records(session: Pick<Session, 'events'>, prefix: string): unknown[] {
  const ids = new Map<string, string>()
  const stable = (value: string) => {
    if (!ids.has(value)) ids.set(value, `#${ids.size + 1}`)
    return ids.get(value)!
  }
  return (session.events as AnySessionEvent[])
    .filter((event) => event.type.startsWith(prefix))
    .map((event) => {
      const data = { ...(event.data as Record<string, unknown>) }
      if (typeof data.runId === 'string') data.runId = stable(data.runId)
      if (typeof data.sessionId === 'string') data.sessionId = data.sessionId.replace(/-sub-[0-9a-f]+$/, '-sub-*')
      if (typeof data.messageId === 'string') data.messageId = 'm'
      return { type: event.type, ...data }
    })
}

/**
 * Named holds for model calls: `hold(key)` (called by a responder) resolves
 * when the test calls `open(key, reply)`; `reached(key)` resolves once a
 * responder is holding at `key`. How tests order children without sleeping.
 */
export class Gates {
  private readonly gates = new Map<string, { reached: Deferred<void>; opened: Deferred<string | ScriptReply> }>()
  /** Every key a responder reached, in order. */
  readonly log: string[] = []

  private gate(key: string) {
    let gate = this.gates.get(key)
    if (!gate) {
      gate = { reached: deferred<void>(), opened: deferred<string | ScriptReply>() }
      this.gates.set(key, gate)
    }
    return gate
  }

  /** Holds until `open(key)`; when the request's `signal` aborts first (a cancel), rejects with its reason, as a provider would. */
  hold(key: string, request?: { signal?: AbortSignal }): Promise<string | ScriptReply> {
    this.log.push(key)
    const gate = this.gate(key)
    gate.reached.resolve()
    const signal = request?.signal
    if (!signal) return gate.opened.promise
    return new Promise((resolve, reject) => {
      const abort = () => reject(signal.reason)
      if (signal.aborted) return abort()
      signal.addEventListener('abort', abort, { once: true })
      gate.opened.promise.then((reply) => {
        signal.removeEventListener('abort', abort)
        resolve(reply)
      })
    })
  }

  reached(key: string): Promise<void> {
    return this.gate(key).reached.promise
  }

  open(key: string, reply: string | ScriptReply): void {
    this.gate(key).opened.resolve(reply)
  }
}

/** A parent-side tool that holds until the test opens its gate: `wait { key }` answers the gate's text. */
export function waitTool(gates: Gates) {
  return defineTool({
    name: 'wait',
    description: 'Waits.',
    parameters: z.object({ key: z.string() }),
    effect: 'read',
    async execute({ key }, run) {
      const reply = await gates.hold(key, run)
      return typeof reply === 'string' ? reply : 'opened'
    },
  })
}
