import type { Agent } from '@deepseek-ai/dsh-agent'
import AgentSpine from '@deepseek-ai/dsh-agent-spine'
import type { GenerateOptions, Message } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'
import type { AnySessionEvent, MemorySessionPersistence, Session } from '@deepseek-ai/dsh-session'
import { bundleApp, deferred, echo, type Deferred } from '@deepseek-ai/dsh-testkit'
import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { z } from 'zod'
import Tasks, { type TaskControl, type TaskSpec } from '../src'

/** What a responder is given: the request with the call's signal (the scripted model passes its generate options). */
export type Request = GenerateOptions
export type Responder = (request: Request) => string | ScriptReply | Promise<string | ScriptReply>

/**
 * The spine bundle (invariants under `throw`), a scripted model answering
 * through `respond` (default: `ok`), memory persistence on `backend` (which
 * outlives agents, so a test can resume), and dsh-tasks beside the bundle
 * (the kit's `bundleApp`).
 */
export async function harness(options: { respond?: Responder; tools?: ToolDefinition<any>[]; backend?: MemorySessionPersistence; tasks?: Tasks.Config } = {}) {
  const respond = options.respond ?? (() => 'ok')
  const app = await bundleApp({
    bundle: AgentSpine,
    respond: (request) => respond(request),
    tools: options.tools ?? [echo],
    ...(options.backend ? { backend: options.backend } : {}),
    plugins: (root) => [root.plugin(Tasks, options.tasks ?? {})],
  })
  return { ...app, tasksFiber: app.plugins[0]! }
}

export type Harness = Awaited<ReturnType<typeof harness>>

/**
 * A task's work the test drives by hand: `finish(text)` completes it,
 * `fail(error)` fails it; a stop (its signal) settles it with `stopped …`
 * unless `ignoreStop`. `running` resolves once the work started; `settled`
 * once it returned.
 */
export interface Work {
  readonly running: Promise<TaskControl>
  readonly settled: Promise<void>
  signal: AbortSignal | undefined
  finish(text: string): void
  fail(error: unknown): void
  /** The `run` to put in a spec. */
  run: TaskSpec['run']
  /** The output so far, as `output()` reports it. */
  printed: string
}

export function work(options: { ignoreStop?: boolean } = {}): Work {
  const running = deferred<TaskControl>()
  const settled = deferred<void>()
  const outcome: Deferred<string> = deferred<string>()
  const w: Work = {
    running: running.promise,
    settled: settled.promise,
    signal: undefined,
    printed: '',
    finish: (text) => outcome.resolve(text),
    fail: (error) => outcome.reject(error),
    run: async (signal, control) => {
      w.signal = signal
      if (!options.ignoreStop) signal.addEventListener('abort', () => outcome.resolve(`stopped ${w.printed}`.trim()), { once: true })
      running.resolve(control)
      try {
        return await outcome.promise
      } finally {
        settled.resolve()
      }
    },
  }
  return w
}

/** A spec for `owner` running `w`, printing into `w.printed`. */
export function spec(owner: Agent, w: Work, title = 'job', kind = 'test'): TaskSpec {
  return { owner, kind, title, run: w.run, output: () => w.printed }
}

type Gate = { reached: Deferred<void>; open: Deferred<void> }

/** A tool that holds until the test opens `gate` (or the gate `gate()` returns at the call): `hold {}` answers `held`. */
export function holdTool(current: Gate | (() => Gate)) {
  return defineTool({
    name: 'hold',
    description: 'Holds.',
    parameters: z.object({}),
    effect: 'read',
    async execute(_args, run) {
      const gate = typeof current === 'function' ? current() : current
      gate.reached.resolve()
      await new Promise<void>((resolve, reject) => {
        run.signal.addEventListener('abort', () => reject(run.signal.reason), { once: true })
        gate.open.promise.then(resolve)
      })
      return 'held'
    },
  })
}

export function gate(): Gate {
  return { reached: deferred<void>(), open: deferred<void>() }
}

/** The text of a message. */
export function textOf(message: Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

/** The events of a log whose type starts with `prefix`, as `{ type, ...data }` with message ids made `m`. */
export function records(session: Session, prefix: string): unknown[] {
  return (session.events as AnySessionEvent[])
    .filter((event) => event.type.startsWith(prefix))
    .map((event) => {
      const data = { ...(event.data as Record<string, unknown>) }
      if (typeof data.messageId === 'string') data.messageId = 'm'
      return { type: event.type, ...data }
    })
}

/**
 * How many times the model-visible history of `session` carries the notice
 * of task `id`: a `steering/message` of an inbox item whose metadata names
 * the task, or an injected `user/message` whose metadata does. What
 * "delivered exactly once" counts.
 */
export function seen(session: Session, id: string): number {
  const items = new Set<string>()
  let count = 0
  for (const event of session.events as AnySessionEvent[]) {
    if (event.type === 'inbox/enqueue' && event.data.message.metadata.task === id) items.add(event.data.message.id)
    else if (event.type === 'steering/message' && items.has(event.data.message.id as string)) count++
    else if (event.type === 'user/message' && (event.data.metadata?.task === id || items.has(event.data.message.id as string))) count++
  }
  return count
}
