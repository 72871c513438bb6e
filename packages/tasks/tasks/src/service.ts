import '@deepseek-ai/dsh-agent'
import type { Agent, SessionStartSource } from '@deepseek-ai/dsh-agent'
import { containedEmitter, subjectFilter } from '@deepseek-ai/dsh-scope'
import type { SessionId } from '@deepseek-ai/dsh-session'
import { TasksConfig } from './config'
import { Context, Service, type Events } from './cordis'
import { Deliveries, type Outcome } from './delivery'
import { TasksError } from './errors'
import { outcomeNotice, type NoticeFacts } from './notice'
import { scanForResume } from './resume-scan'
import { Task } from './task'
import type { TaskEndEvent, TaskEnding, TaskHandle, TaskResult, TaskSpec, TaskStopCause } from './types'

declare module 'cordis' {
  interface Context {
    tasks: Tasks
  }
}

const END_EVENT = { completed: 'tasks/finished', failed: 'tasks/failed', cancelled: 'tasks/cancelled' } as const

/**
 * `ctx.tasks` (R-TSK-1, R-TSK-1a, R-TSK-2): background work owned by an
 * agent, whose outcome reaches the owner's model exactly once.
 *
 * - `start(spec)` runs `spec.run(signal)` in the background and returns its
 *   handle. The task is logged in the owner's session (`task/started`) and
 *   announced (`tasks/started`).
 * - When the work settles (`tasks/finished` / `failed` / `cancelled`), the
 *   outcome is delivered to the owner: a completion or failure as next-step
 *   input with a wakeup (`send`), so a running owner reads it at its next
 *   step and an idle one starts a steering turn; a stop by the person (or by
 *   the owner's own cancellation, or an unload) as an injection that starts
 *   no turn; a stop by the model (`task_kill`) through that call's result
 *   (as an injection when that call stopped waiting first: `unreported`).
 *   Each delivery is logged (`task/delivered`).
 * - Stopping: a task ends when its owner is disposed, when the owner is
 *   cancelled with cause `parent`, when the context that started it unloads,
 *   or when someone calls `cancel()`. A cancel of the owner's turn by the
 *   person (cause `user`) leaves background tasks running.
 * - On resume (`agent/session-start` with source `resume`) every task the
 *   log shows started and never delivered is delivered once, as
 *   `interrupted`, without starting a turn.
 */
export class Tasks extends Service {
  static readonly inject = ['agents', 'sessions']
  static readonly Config = TasksConfig

  private readonly home: Context
  private readonly maxOutputChars: number
  private readonly keepFinished: number
  private readonly byId = new Map<string, Task>()
  private readonly byOwner = new Map<SessionId, Task[]>()
  private readonly gone = new WeakSet<Agent>()
  private readonly bound = new WeakSet<Agent>()
  /** Tasks stopped by the model whose stopping call stopped waiting before they ended (see `unreported`). */
  private readonly unreportedStops = new Set<string>()
  private readonly deliveries: Deliveries
  private readonly emitter
  private readonly log
  private nextNumber = 1

  constructor(ctx: Context, config: TasksConfig = {}) {
    super(ctx, 'tasks')
    this.home = ctx
    this.maxOutputChars = config.maxOutputChars ?? 30_000
    this.keepFinished = config.keepFinished ?? 50
    this.log = ctx.logger('tasks')
    this.emitter = containedEmitter(ctx)
    this.deliveries = new Deliveries((message) => this.log.warn(message))
    ctx.sessions.registerType('task/started', { ignorable: true })
    ctx.sessions.registerType('task/delivered', { ignorable: true })
    ctx.sessions.registerType('task/undelivered', { ignorable: true })
    ctx.on('agent/cancel-requested', (agent, cause) => {
      if (cause.kind === 'parent') this.stopAll(agent, 'owner-cancelled')
    })
    ctx.on('agent/inbox/discard', (agent, messages) => this.deliveries.discarded(agent, messages))
    ctx.on('agent/session-start', (agent, source) => this.sessionStart(agent, source))
    ctx.on('agent/disposed', (agent) => this.ownerGone(agent))
    // The service going away takes every task with it (their owners are told, without a turn).
    ctx.effect(() => () => Promise.all([...this.byId.values()].map((task) => (task.cancel({ by: 'unloaded' }), task.result()))).then(() => {}))
  }

  /**
   * Starts a background task owned by `spec.owner` and returns its handle.
   * The task is bound to the calling context: when that context unloads,
   * the task is stopped (cause `unloaded`) and the unload waits for its work
   * to settle. Throws `INVALID_TASK` for a malformed spec and `OWNER_GONE`
   * when the owner is not a live agent (or the caller is unloading).
   */
  start(spec: TaskSpec): TaskHandle {
    checkSpec(spec)
    const owner = spec.owner
    if (this.gone.has(owner) || this.home.agents.get(owner.id) !== owner) {
      throw new TasksError('OWNER_GONE', `agent ${String(owner.id)} is not a live agent of this app: a task needs a live owner to report to`)
    }
    const id = `task-${this.nextNumber++}`
    let unbind: () => unknown = () => {}
    const task = new Task(id, spec, {
      progress: (task, note) => this.emit('tasks/progress', task, { task, note }),
      ended: (task, result) => this.ended(task, result, unbind),
    })
    try {
      owner.session.append('task/started', { id, kind: spec.kind, title: spec.title, ...(spec.callId !== undefined ? { callId: spec.callId } : {}) })
    } catch (error) {
      throw new TasksError('OWNER_GONE', `agent ${String(owner.id)} refused to log the task (${error instanceof Error ? error.message : String(error)})`, { cause: error })
    }
    try {
      unbind = this.ctx.effect(() => () => (task.cancel({ by: 'unloaded' }), task.result().then(() => {})), `task ${id}`)
    } catch (error) {
      // The caller is unloading: the task was logged, so it ends at once, reported as stopped.
      this.track(task)
      task.begin()
      task.cancel({ by: 'unloaded' })
      throw new TasksError('OWNER_GONE', 'the context starting the task is unloading', { cause: error })
    }
    // Durable at once (also outside a turn, where nothing else would flush it soon): a crash from here on is reported on resume.
    this.home.sessions.flush(owner.session).catch((error: unknown) => this.log.warn(`task ${id}: the flush of its record failed (${error instanceof Error ? error.message : String(error)})`))
    this.track(task)
    this.bindOwner(owner)
    this.emit('tasks/started', task, { task })
    task.begin()
    return task
  }

  /** A task by id (running, or finished and still kept), if any. */
  get(id: string): TaskHandle | undefined {
    return this.byId.get(id)
  }

  /** The tasks of `owner` (or of every owner), running and finished, in start order. */
  list(owner?: Agent): readonly TaskHandle[] {
    if (owner) return [...(this.byOwner.get(owner.id) ?? [])].filter((task) => task.owner === owner)
    return [...this.byId.values()]
  }

  /** Stops every running task of `owner` (default cause `person`); returns how many were asked to stop. */
  stopAll(owner: Agent, by: TaskStopCause = 'person'): number {
    let stopped = 0
    for (const task of this.byOwner.get(owner.id) ?? []) if (task.owner === owner && task.cancel({ by })) stopped++
    return stopped
  }

  /**
   * Logs that the result of the tool call that stopped task `id` (the
   * model's `task_kill`) reported its outcome, so nothing else is sent.
   * For tools that stop a task with `cancel({ by: 'model' })`.
   */
  reportedByResult(task: TaskHandle): void {
    this.deliveries.reported(task.owner, task.id)
  }

  /**
   * The tool call that stopped `task` with `cancel({ by: 'model' })` stopped
   * waiting for it before it ended (that call was cancelled, or ran out of
   * time), so its result does not report the outcome: when the task ends,
   * the outcome is injected (no turn is started), as a stop by the person
   * is. No effect on a task that ended already or was not stopped by the model.
   */
  unreported(task: TaskHandle): void {
    const own = this.byId.get(task.id)
    if (own === task && own.status === 'running' && own.stopRequested === 'model') this.unreportedStops.add(task.id)
  }

  /** The notice a model reads for a task outcome (as delivered), for tools that report one in their result. */
  notice(task: TaskHandle, result: TaskResult): string {
    return outcomeNotice(factsOf(task, result.status, result), this.maxOutputChars)
  }

  private track(task: Task): void {
    this.byId.set(task.id, task)
    const list = this.byOwner.get(task.owner.id)
    if (list) list.push(task)
    else this.byOwner.set(task.owner.id, [task])
  }

  private ended(task: Task, result: TaskResult, unbind: () => unknown): void {
    void unbind()
    const unreported = this.unreportedStops.delete(task.id)
    this.emit(END_EVENT[result.status], task, { task, result } satisfies TaskEndEvent)
    const owner = task.owner
    if (this.gone.has(owner)) {
      this.drop(task)
      return
    }
    const by = result.stoppedBy
    if (by === 'model' && !unreported) this.deliveries.reported(owner, task.id)
    else if (by !== 'owner-disposed') {
      const route = result.status === 'cancelled' ? 'inject' : 'steer'
      this.deliveries.deliver(owner, this.outcome(factsOf(task, result.status, result)), route)
    }
    this.trim(owner)
  }

  private outcome(facts: NoticeFacts): Outcome {
    return { taskId: facts.id, status: facts.ending, content: [{ type: 'text', text: outcomeNotice(facts, this.maxOutputChars) }] }
  }

  /** Keeps at most `keepFinished` finished tasks of an owner. */
  private trim(owner: Agent): void {
    const list = this.byOwner.get(owner.id)
    if (!list) return
    let finished = list.filter((task) => task.status !== 'running').length
    for (let i = 0; i < list.length && finished > this.keepFinished; ) {
      if (list[i]!.status === 'running') {
        i++
        continue
      }
      this.byId.delete(list[i]!.id)
      list.splice(i, 1)
      finished--
    }
  }

  private drop(task: Task): void {
    this.byId.delete(task.id)
    const list = this.byOwner.get(task.owner.id)
    const at = list?.indexOf(task) ?? -1
    if (at >= 0) list!.splice(at, 1)
    if (list && list.length === 0) this.byOwner.delete(task.owner.id)
  }

  /**
   * Makes the owner's teardown wait for its tasks: one effect on the owner's
   * scoped context (revoked last by `AgentHandle.dispose()`) stops every task
   * still running and waits until their work settled, so a disposed agent
   * leaves no task (no shell process, no child agent) behind it.
   */
  private bindOwner(owner: Agent): void {
    if (this.bound.has(owner)) return
    this.bound.add(owner)
    try {
      owner.ctx.effect(() => () => {
        this.ownerGone(owner)
        return Promise.all(this.list(owner).map((task) => task.result())).then(() => {})
      }, 'tasks of this agent')
    } catch (error) {
      // The owner's scope is already being revoked: `agent/disposed` stops the tasks without waiting.
      this.log.warn(`agent ${String(owner.id)}: its disposal will not wait for its tasks (${error instanceof Error ? error.message : String(error)})`)
    }
  }

  private ownerGone(agent: Agent): void {
    this.gone.add(agent)
    this.stopAll(agent, 'owner-disposed')
    for (const task of [...(this.byOwner.get(agent.id) ?? [])]) if (task.owner === agent && task.status !== 'running') this.drop(task)
  }

  /** Resume: ids continue after the log's, and undelivered outcomes are delivered (R-TSK-2). */
  private sessionStart(agent: Agent, source: SessionStartSource): void {
    const findings = scanForResume(agent.session, 1 + (agent.session.meta.seedLength ?? 0))
    this.nextNumber = Math.max(this.nextNumber, findings.highestNumber + 1)
    if (source !== 'resume') return
    for (const record of findings.unrecorded) this.deliveries.record(agent, record)
    for (const outcome of findings.redeliver) this.deliveries.deliver(agent, outcome, 'inject')
    for (const task of findings.interrupted) {
      this.deliveries.deliver(agent, this.outcome({ ...task, ending: 'interrupted', output: '' }), 'inject')
    }
  }

  private emit<K extends 'tasks/started' | 'tasks/progress' | 'tasks/finished' | 'tasks/failed' | 'tasks/cancelled'>(name: K, task: Task, event: Parameters<Events[K]>[0]): void {
    this.emitter.emit(subjectFilter(task.owner.id), name, [event], (error) => this.log.warn(error))
  }
}

function factsOf(task: Pick<TaskHandle, 'id' | 'kind' | 'title'>, ending: TaskEnding, result: Pick<TaskResult, 'output' | 'error' | 'stoppedBy'>): NoticeFacts {
  return {
    id: task.id,
    kind: task.kind,
    title: task.title,
    ending,
    output: result.output,
    ...(result.error ? { error: result.error } : {}),
    ...(result.stoppedBy ? { stoppedBy: result.stoppedBy } : {}),
  }
}

function checkSpec(spec: TaskSpec): void {
  const problem =
    !spec || typeof spec !== 'object'
      ? 'a spec object'
      : !spec.owner || typeof spec.owner !== 'object' || typeof spec.owner.send !== 'function'
        ? 'an owner (an agent from ctx.agents)'
        : typeof spec.kind !== 'string' || spec.kind.trim() === ''
          ? 'a non-empty kind'
          : typeof spec.title !== 'string' || spec.title.trim() === ''
            ? 'a non-empty title'
            : typeof spec.run !== 'function'
              ? 'a run(signal) function'
              : spec.output !== undefined && typeof spec.output !== 'function'
                ? 'an output() function, when it has one'
                : spec.callId !== undefined && typeof spec.callId !== 'string'
                  ? 'a string callId, when it has one'
                  : undefined
  if (problem) throw new TasksError('INVALID_TASK', `ctx.tasks.start() needs ${problem}`)
}

export namespace Tasks {
  export type Config = TasksConfig
}
