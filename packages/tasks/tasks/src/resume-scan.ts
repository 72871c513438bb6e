import type { MessageId } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import { outcomeOf, TASKS_SOURCE, type Outcome } from './delivery'
import type { TaskEnding } from './types'

/** What a resumed owner's log says about its tasks. */
export interface ResumeFindings {
  /** The highest `task-N` number in the log (0 when none), so new ids never repeat an old one. */
  readonly highestNumber: number
  /** Started, and no outcome of theirs is in the log: delivered once as `interrupted`. */
  readonly interrupted: readonly { readonly id: string; readonly kind: string; readonly title: string }[]
  /** Admitted as steering and discarded after their last record, or refused while the owner was closed (`task/undelivered`): admitted again. */
  readonly redeliver: readonly Outcome[]
  /** Admitted, but the `task/delivered` record is missing (the process stopped between the two): the record is written. */
  readonly unrecorded: readonly { readonly id: string; readonly status: TaskEnding; readonly via: 'steer' | 'inject'; readonly messageId: MessageId }[]
}

const TYPES = new Set(['task/started', 'task/delivered', 'task/undelivered', 'inbox/enqueue', 'inbox/discard', 'user/message'])

/**
 * Reads a resumed owner's log from `from` (past a fork's seed) and says, for
 * each task that started there, whether its outcome reached the model: a
 * `task/delivered` record whose item was not discarded afterwards, or an
 * admitted item (inbox or injection, carrying `metadata.task`) whose record
 * the crash cut off. A steering item still pending is left to the owner's
 * rebuilt inbox (it is read at the next wakeup). An outcome the owner
 * refused while it was being closed (`task/undelivered`, with no delivery
 * after it) is delivered from that record. One pass; only the six event
 * types above are materialized.
 */
export function scanForResume(session: Session, from: number): ResumeFindings {
  const started = new Map<string, { kind: string; title: string }>()
  const last = new Map<string, { via: string; messageId?: string; status: TaskEnding }>()
  const items = new Map<MessageId, Outcome>()
  const lastItem = new Map<string, MessageId>()
  const injected = new Map<string, { id: MessageId; status: TaskEnding }>()
  const discarded = new Set<MessageId>()
  /** Outcomes refused while the owner was being closed, and not delivered after. */
  const kept = new Map<string, Outcome>()
  let highestNumber = 0
  const events = session.events
  for (let i = 0, length = events.length; i < length; i++) {
    const type = session.typeAt(i)
    if (type === undefined || !TYPES.has(type)) continue
    const event = events[i]!
    if (event.type === 'task/started') {
      const number = /^task-(\d+)$/.exec(event.data.id)?.[1]
      if (number !== undefined) highestNumber = Math.max(highestNumber, Number(number))
    }
    if (i < from) continue
    switch (event.type) {
      case 'task/started':
        started.set(event.data.id, { kind: event.data.kind, title: event.data.title })
        break
      case 'task/delivered':
        last.set(event.data.id, event.data)
        kept.delete(event.data.id)
        break
      case 'task/undelivered':
        kept.set(event.data.id, { taskId: event.data.id, status: event.data.status, content: event.data.content })
        break
      case 'inbox/enqueue': {
        const outcome = outcomeOf(event.data.message)
        if (!outcome) break
        items.set(event.data.message.id, outcome)
        lastItem.set(outcome.taskId, event.data.message.id)
        break
      }
      case 'inbox/discard':
        for (const id of event.data.ids) discarded.add(id)
        break
      case 'user/message': {
        const metadata = event.data.metadata
        const source = event.data.message.source
        if (!metadata || source?.kind !== 'plugin' || source.plugin !== TASKS_SOURCE.plugin || typeof metadata.task !== 'string') break
        injected.set(metadata.task, { id: event.data.message.id as MessageId, status: metadata.status as TaskEnding })
        break
      }
    }
  }

  const interrupted: { id: string; kind: string; title: string }[] = []
  const redeliver: Outcome[] = []
  const unrecorded: { id: string; status: TaskEnding; via: 'steer' | 'inject'; messageId: MessageId }[] = []
  for (const [id, task] of started) {
    const refused = kept.get(id)
    if (refused) {
      redeliver.push(refused)
      continue
    }
    let record = last.get(id)
    if (!record) {
      const item = lastItem.get(id)
      const injection = injected.get(id)
      if (item !== undefined) {
        record = { via: 'steer', messageId: item, status: items.get(item)!.status }
        unrecorded.push({ id, status: record.status, via: 'steer', messageId: item })
      } else if (injection) {
        unrecorded.push({ id, status: injection.status, via: 'inject', messageId: injection.id })
        continue
      } else {
        interrupted.push({ id, ...task })
        continue
      }
    }
    if (record.via !== 'steer' || record.messageId === undefined || !discarded.has(record.messageId as MessageId)) continue
    const outcome = items.get(record.messageId as MessageId)
    if (outcome) redeliver.push(outcome)
    else interrupted.push({ id, ...task })
  }
  return { highestNumber, interrupted, redeliver, unrecorded }
}
