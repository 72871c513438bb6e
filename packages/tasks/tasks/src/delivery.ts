import type { Agent, AgentMessage } from '@deepseek-ai/dsh-agent'
import type { ContentBlock, JsonObject, MessageId } from '@deepseek-ai/dsh-llm'
import type { TaskDeliveryRoute } from './events'
import type { TaskEnding } from './types'

/** The source every delivered outcome carries. */
export const TASKS_SOURCE = Object.freeze({ kind: 'plugin' as const, plugin: 'tasks' })

/** One outcome to hand to an owner's model: the notice's content and the task it is about. */
export interface Outcome {
  readonly taskId: string
  readonly status: TaskEnding
  readonly content: readonly ContentBlock[]
}

/**
 * Hands task outcomes to their owners' models, exactly once (R-TSK-2).
 *
 * - `steer`: `send({ target: 'next-step', wakeup: true, source: plugin
 *   'tasks' })`: a running owner reads it at its next step boundary, an idle
 *   one starts a steering turn. The item rides the owner's durable inbox
 *   (its `inbox/enqueue` carries `metadata.task`), so a crash keeps it
 *   pending.
 * - `inject`: a durable injection without a wakeup (no turn is started; the
 *   `user/message` carries `metadata.task`).
 *
 * Each admission is followed by a `task/delivered` record in the owner's
 * log, in the same synchronous step. A steering item the owner discards
 * before its model read it (a cancel of the turn, a terminal stop, a
 * rejected step) is admitted again as an injection, from its own content
 * and metadata, so it is never lost; an outcome the owner refuses because
 * it is being closed is kept in its log (`task/undelivered`) and a discard
 * during its disposal is left to a resume (see `scanForResume`).
 */
export class Deliveries {
  /** The task whose steering item is being admitted, and what its owner discarded meanwhile. */
  private admitting: { taskId: string; discarded: AgentMessage[] } | undefined

  constructor(private readonly warn: (message: string) => void) {}

  /** Admits `outcome` to `owner` by `route`; false when the owner refused it (it is closing, or failed). */
  deliver(owner: Agent, outcome: Outcome, route: Exclude<TaskDeliveryRoute, 'result'>): boolean {
    const metadata: JsonObject = { task: outcome.taskId, status: outcome.status }
    let messageId: MessageId
    const outer = this.admitting
    const admitting = (this.admitting = { taskId: outcome.taskId, discarded: [] as AgentMessage[] })
    try {
      messageId =
        route === 'steer'
          ? owner.send({ content: outcome.content, source: TASKS_SOURCE, contexts: [], placement: 'separate', metadata, target: 'next-step', wakeup: true })
          : owner.inject({ content: outcome.content, source: TASKS_SOURCE, metadata })
    } catch (error) {
      if ((error as { code?: unknown } | null)?.code !== 'DISPOSED') {
        this.warn(`task ${outcome.taskId}: its outcome could not reach agent ${owner.id} (${error instanceof Error ? error.message : String(error)})`)
      } else {
        // The owner is being closed: keep the notice in its log (still attached while it drains) for a resume.
        try {
          owner.session.append('task/undelivered', { id: outcome.taskId, status: outcome.status, content: [...outcome.content] })
        } catch {
          // Detached already: a resume reports the task as interrupted.
        }
      }
      return false
    } finally {
      this.admitting = outer
    }
    this.record(owner, { id: outcome.taskId, status: outcome.status, via: route, messageId })
    // Dropped while it was being admitted (the owner is in a terminal stop's window): admit it again, after its record.
    for (const message of admitting.discarded) this.discarded(owner, [message])
    return true
  }

  /** Logs that the result of the call that stopped the task reported it (`task_kill`). */
  reported(owner: Agent, taskId: string): void {
    this.record(owner, { id: taskId, status: 'cancelled', via: 'result' })
  }

  /** The owner dropped items (`agent/inbox/discard`): each task outcome among them is admitted again, as an injection. */
  discarded(owner: Agent, messages: readonly AgentMessage[]): void {
    for (const message of messages) {
      const outcome = outcomeOf(message)
      if (!outcome) continue
      if (this.admitting?.taskId === outcome.taskId) this.admitting.discarded.push(message)
      else this.deliver(owner, outcome, 'inject')
    }
  }

  record(owner: Agent, data: { id: string; status: TaskEnding; via: TaskDeliveryRoute; messageId?: string }): void {
    try {
      owner.session.append('task/delivered', data)
    } catch (error) {
      this.warn(`task ${data.id}: could not log its delivery to agent ${owner.id} (${error instanceof Error ? error.message : String(error)})`)
    }
  }
}

/** The task outcome an inbox item carries, if it is one of ours. */
export function outcomeOf(message: Pick<AgentMessage, 'source' | 'metadata' | 'content'>): Outcome | undefined {
  if (message.source.kind !== 'plugin' || message.source.plugin !== TASKS_SOURCE.plugin) return undefined
  const { task, status } = message.metadata as { task?: unknown; status?: unknown }
  if (typeof task !== 'string' || typeof status !== 'string') return undefined
  return { taskId: task, status: status as TaskEnding, content: message.content }
}
