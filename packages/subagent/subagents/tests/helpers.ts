import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import type { ContentBlock, GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import Permissions from '@deepseek-ai/dsh-permissions'
import type { AnySessionEvent, MemorySessionPersistence, Session } from '@deepseek-ai/dsh-session'
import { bundleApp, deferred, type Deferred } from '@deepseek-ai/dsh-testkit'
import { defineTool, type ApprovalRequest, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import type { Context } from 'cordis'
import { z } from 'zod'
import Subagents, { type AgentTypeConfig, type SubagentsConfig } from '../src'

/** A read-only tool: `look { at }` answers `saw <at>`. */
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

export const explore: AgentTypeConfig = { name: 'explore', description: 'Reads; changes nothing.', systemPrompt: 'You explore.', tools: ['look'] }
export const writer: AgentTypeConfig = { name: 'writer', description: 'Writes notes.', systemPrompt: 'You write notes.', tools: ['look', 'note'] }

/** What a responder is given: the request with the call's signal (the scripted model passes its generate options). */
export type Request = GenerateOptions
/** Answers every model call; `who` is `parent` or the child's first prompt. */
export type Responder = (request: Request, who: string) => string | ScriptReply | Promise<string | ScriptReply>

export function textOf(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

/** The first user message's text of a request: for a child, its prompt. */
export function promptOf(request: Pick<Request, 'messages'>): string {
  const first = request.messages.find((message) => message.role === 'user')
  return first ? textOf(first) : ''
}

/**
 * The spine bundle (invariants under `throw`), a scripted model answering
 * through `respond`, memory persistence on `backend`, and dsh-subagents
 * with `types` (the kit's `bundleApp`); with `permissions`, dsh-permissions
 * and an approval service that answers `allow` and records every question
 * in `asked`.
 */
export async function harness(options: {
  respond: Responder
  types?: AgentTypeConfig[]
  subagents?: Omit<SubagentsConfig, 'types'>
  tools?: ToolDefinition<any>[]
  permissions?: Record<string, unknown>
  backend?: MemorySessionPersistence
}) {
  const asked: string[] = []
  const app = await bundleApp({
    bundle: AgentSpine,
    respond: (request) => options.respond(request, String(request.sessionId).includes('-sub-') ? promptOf(request) : 'parent'),
    tools: options.tools ?? [look, note],
    ...(options.backend ? { backend: options.backend } : {}),
    plugins: (root) => {
      const plugins: ReturnType<Context['plugin']>[] = []
      if (options.permissions) {
        root.provide('approval', {
          async request(request: ApprovalRequest) {
            asked.push(`${String(request.agent.id).includes('-sub-') ? 'child' : 'parent'} ${request.call.name}`)
            return 'allow'
          },
        } as never)
        plugins.push(root.plugin(Permissions, { userDirectory: false, root: process.cwd(), ...options.permissions }))
      }
      plugins.push(root.plugin(Subagents, { ...options.subagents, types: options.types ?? [explore, writer] }))
      return plugins
    },
  })
  return { ...app, asked, agent: (id = 'p') => app.agent(id), resume: (id = 'p') => app.resume(id) }
}

export type Harness = Awaited<ReturnType<typeof harness>>

/** The `tool/result` texts of a log, in order, with their codes. */
export function toolResults(session: Session): string[] {
  return (session.events as AnySessionEvent[])
    .filter((event): event is Extract<AnySessionEvent, { type: 'tool/result' }> => event.type === 'tool/result')
    .map((event) => {
      const block = event.data.message.content[0] as Extract<ContentBlock, { type: 'tool-result' }>
      return `${event.data.error?.code ?? 'ok'}: ${block.content.map((part) => (part.type === 'text' ? part.text : '')).join('')}`
    })
}

/** The events of a log whose type starts with `prefix`, with run ids and child session ids made stable. */
export function records(session: Session, prefix: string): unknown[] {
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
      return { type: event.type, ...data }
    })
}

/**
 * Named holds for model calls: `hold(key, request)` resolves when the test
 * calls `open(key, reply)` (or rejects when the call's signal aborts);
 * `reached(key)` resolves once a responder holds at `key`.
 */
export class Gates {
  private readonly gates = new Map<string, { reached: Deferred<void>; opened: Deferred<string | ScriptReply> }>()
  readonly log: string[] = []

  private gate(key: string) {
    let gate = this.gates.get(key)
    if (!gate) this.gates.set(key, (gate = { reached: deferred<void>(), opened: deferred<string | ScriptReply>() }))
    return gate
  }

  hold(key: string, request?: { signal?: AbortSignal }): Promise<string | ScriptReply> {
    this.log.push(key)
    const gate = this.gate(key)
    gate.reached.resolve()
    const signal = request?.signal
    if (!signal) return gate.opened.promise
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason)
      signal.addEventListener('abort', () => reject(signal.reason), { once: true })
      gate.opened.promise.then(resolve)
    })
  }

  reached(key: string): Promise<void> {
    return this.gate(key).reached.promise
  }

  open(key: string, reply: string | ScriptReply): void {
    this.gate(key).opened.resolve(reply)
  }
}
