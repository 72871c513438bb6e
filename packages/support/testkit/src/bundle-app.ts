import '@deepseek-ai/dsh-agent'
import type { Agent, AgentHandle, AgentOptions } from '@deepseek-ai/dsh-agent'
import '@deepseek-ai/dsh-llm'
import type { GenerateOptions, ModelInfo } from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import { memoryPersistence, MemorySessionPersistence, SessionId } from '@deepseek-ai/dsh-session'
import '@deepseek-ai/dsh-tools'
import type { ToolDefinition } from '@deepseek-ai/dsh-tools'
import { expect } from 'vitest'
import { Context, type Fiber } from './cordis'

/** A mounted plugin as `ctx.plugin()` returns it: awaitable, disposable. */
type Mounted = PromiseLike<unknown> & { dispose(): unknown }

/**
 * Answers a model call: given the generate options (the request, with the
 * call's signal) and the call's 0-based index among the calls this responder
 * answered (not among all of the model's calls).
 */
export type BundleResponder = (request: GenerateOptions, call: number) => string | ScriptReply | Promise<string | ScriptReply>

/**
 * A lane of model calls kept apart from the agents' own: a call `match`
 * accepts is answered by `respond` (counting its own calls) and recorded in
 * `app.routed[name]`, never in `app.answered`. A plugin that calls the model
 * itself (dsh-compaction's summarizer, a title generator…) gets its own
 * answers while the agents' responder keeps counting only the agents' calls.
 */
export interface BundleRoute {
  match(request: GenerateOptions): boolean
  respond: BundleResponder
}

export interface BundleAppOptions {
  /**
   * The spine bundle: `@deepseek-ai/dsh-agent-spine`'s default export. Passed
   * in because the bundle's own tests use this kit (a dependency would be a
   * cycle).
   */
  bundle: Parameters<Context['plugin']>[0]
  /** Merged over the bundle config the kit uses (`agents: []`, invariants `throw`, no retry delay, the test identity). */
  bundleConfig?: Record<string, unknown>
  /** Answers every model call no route takes (see `BundleResponder`); those calls are recorded in `app.answered`. */
  respond: BundleResponder
  /** Lanes of calls answered apart, by name; a call goes to the first route whose `match` accepts it (see `BundleRoute`). */
  routes?: Record<string, BundleRoute>
  /** What the scripted model reports per model id (context window, output limit…); unknown ids get `{ id }`. */
  models?: readonly ModelInfo[]
  /** Tools registered on the root after the bundle (none by default). */
  tools?: ToolDefinition<any>[]
  /** The memory backend sessions persist to (default: a new one): pass the same one to a second app to resume there. */
  backend?: MemorySessionPersistence
  /** Another persistence plugin instead of memory (e.g. dsh-session-jsonl), mounted on `root`. */
  persistence?: (root: Context) => Mounted
  /** The plugins under test, mounted after persistence in this order (each awaited), disposed in reverse. */
  plugins?: (root: Context) => Mounted[]
  /** The agent options `agent()` and `resume()` use (default `scripted/test-model`). */
  agentOptions?: AgentOptions
}

/**
 * An app as the demo composes one: the spine bundle (invariants under
 * `throw`, so a broken invariant fails the test where it happens), a
 * `ScriptedModel` as provider `scripted` answering through `respond`,
 * persistence (memory on `backend`, which outlives agents so a test can
 * resume), then the plugins under test beside the bundle (dsh-tasks,
 * dsh-subagents, dsh-tool-subagent, dsh-compaction…). Calls a `routes` entry
 * matches are answered and recorded apart from the agents' (`routed`,
 * `answered`).
 *
 * `agent(id)` creates and `resume(id)` resumes an agent, keeping its handle;
 * `disposeAgent(agent)` disposes one; `expectClean()` asserts that the
 * invariants found nothing, now or on the way; `dispose()` disposes every
 * agent, the plugins in reverse order, persistence and the bundle.
 */
export async function bundleApp(options: BundleAppOptions) {
  const root = new Context()
  const spine = root.plugin(options.bundle, {
    agents: [],
    maxParallelToolCalls: 10,
    systemPrompt: { identity: 'You are a test agent.', persona: '' },
    invariants: { policy: 'throw' },
    retry: { baseDelayMs: 0, maxDelayMs: 0 },
    ...options.bundleConfig,
  }) as Fiber
  await spine
  const answered: GenerateOptions[] = []
  const routes = Object.entries(options.routes ?? {})
  const routed: Record<string, GenerateOptions[]> = Object.fromEntries(routes.map(([name]) => [name, []]))
  const respond = (request: GenerateOptions) => {
    for (const [name, route] of routes) {
      if (!route.match(request)) continue
      const calls = routed[name]!
      calls.push(request)
      return route.respond(request, calls.length - 1)
    }
    answered.push(request)
    return options.respond(request, answered.length - 1)
  }
  const model = new ScriptedModel({ respond: (request) => respond(request as GenerateOptions), ...(options.models ? { models: options.models } : {}) })
  root.llm.registerAdapter(['scripted'], model)
  for (const tool of options.tools ?? []) root.tools.register(tool)
  const backend = options.backend ?? new MemorySessionPersistence()
  const persistence = options.persistence ? options.persistence(root) : root.plugin(memoryPersistence, { backend })
  await persistence
  const plugins = options.plugins ? options.plugins(root) : []
  for (const plugin of plugins) await plugin
  const handles: AgentHandle[] = []
  const agentOptions = options.agentOptions ?? { provider: 'scripted', model: 'test-model' }
  const invariants = () => root.get('invariants') as unknown as { check(): Promise<unknown[]>; readonly violations: readonly unknown[] }
  return {
    root,
    model,
    backend,
    handles,
    /** The fibers of `options.plugins`, in mount order. */
    plugins,
    /** The calls `respond` answered (no route took them), in order. */
    answered,
    /** The calls each route answered, by route name, in order. */
    routed,
    async agent(id = 'a'): Promise<Agent> {
      const handle = await root.agents.create({ sessionId: SessionId(id), agentOptions })
      handles.push(handle)
      return handle.agent
    },
    async resume(id = 'a'): Promise<Agent> {
      const handle = await root.agents.resume({ resumeSessionId: SessionId(id), agentOptions })
      handles.push(handle)
      return handle.agent
    },
    /** Disposes the handle of `agent`. */
    async disposeAgent(agent: Agent): Promise<void> {
      const at = handles.findIndex((handle) => handle.agent === agent)
      await handles.splice(at, 1)[0]!.dispose()
    },
    /** The model calls of one agent so far. */
    requestsOf(agent: Agent) {
      return model.requests.filter((request) => request.sessionId === agent.id)
    },
    /** No invariant found anything, now or on the way. */
    async expectClean(): Promise<void> {
      expect(await invariants().check()).toEqual([])
      expect(invariants().violations).toEqual([])
    },
    async dispose(): Promise<void> {
      for (const handle of handles.splice(0)) await handle.dispose()
      for (const plugin of [...plugins].reverse()) await plugin.dispose()
      await persistence.dispose()
      await spine.dispose()
    },
  }
}

/** What `bundleApp()` resolves to. */
export type BundleApp = Awaited<ReturnType<typeof bundleApp>>
