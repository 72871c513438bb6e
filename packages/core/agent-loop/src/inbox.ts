import type { AgentEventEmitter, AgentMessage, Inbox } from '@deepseek-ai/dsh-agent'
import { deepFreeze, type MessageId } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'

/**
 * The agent's two FIFOs and their durable projection.
 *
 * Every transition is logged (`inbox/*` session events) before it is announced
 * (`agent/inbox/*`), so the log alone can rebuild what is pending after a crash
 * and every id gets at most one dequeue or discard.
 */
export class InboxState {
  private turnColumn: AgentMessage[] = []
  private stepColumn: AgentMessage[] = []
  private view: Inbox | undefined

  constructor(
    private readonly session: Session,
    private readonly events: AgentEventEmitter,
  ) {}

  /** A frozen snapshot, rebuilt only after a change. */
  get projection(): Inbox {
    return (this.view ??= Object.freeze({
      nextTurn: Object.freeze(this.turnColumn.slice()),
      nextStep: Object.freeze(this.stepColumn.slice()),
    }))
  }

  get nextTurn(): readonly AgentMessage[] {
    return this.turnColumn
  }

  get nextStep(): readonly AgentMessage[] {
    return this.stepColumn
  }

  /** Whether any ordinary item is pending. */
  get hasTurnWork(): boolean {
    return this.turnColumn.length > 0
  }

  get hasSteering(): boolean {
    return this.stepColumn.length > 0
  }

  enqueue(message: AgentMessage): void {
    this.session.append('inbox/enqueue', { message })
    ;(message.target === 'next-turn' ? this.turnColumn : this.stepColumn).push(message)
    this.view = undefined
    this.events.emit('agent/inbox/enqueue', message)
  }

  /** Claims the oldest ordinary item. */
  claimTurn(): AgentMessage | undefined {
    const message = this.turnColumn[0]
    if (message) this.dequeue(message)
    return message
  }

  /** Claims one item (it must be pending). */
  dequeue(message: AgentMessage): void {
    if (!this.remove(message)) return
    this.session.append('inbox/dequeue', { id: message.id })
    this.events.emit('agent/inbox/dequeue', message)
  }

  /** Drops the given pending items (those no longer pending are skipped). */
  discard(messages: readonly AgentMessage[]): void {
    const dropped = messages.filter((message) => this.remove(message))
    if (dropped.length === 0) return
    this.session.append('inbox/discard', { ids: dropped.map((message) => message.id) })
    this.events.emit('agent/inbox/discard', dropped)
  }

  /** Drops everything pending (cancel, dispose). */
  discardAll(): void {
    this.discard([...this.turnColumn, ...this.stepColumn])
  }

  /** Drops every pending steering item (terminal stop). */
  discardSteering(): void {
    this.discard([...this.stepColumn])
  }

  /**
   * Moves leftover steering to the tail of the ordinary FIFO with a wakeup,
   * keeping each id (logged `inbox/requeue`).
   */
  requeueSteering(): void {
    for (const message of this.stepColumn.splice(0)) {
      const moved = deepFreeze({ ...message, target: 'next-turn' as const, wakeup: true })
      this.turnColumn.push(moved)
      this.session.append('inbox/requeue', { id: message.id })
    }
    this.view = undefined
  }

  /**
   * Rebuilds the pending items from a log (resume). Items keep their order;
   * they stay parked until the next wakeup.
   */
  rebuild(events: readonly AnySessionEvent[]): void {
    const pending = new Map<MessageId, AgentMessage>()
    for (const event of events) {
      switch (event.type) {
        case 'inbox/enqueue':
          pending.set(event.data.message.id, event.data.message)
          break
        case 'inbox/dequeue':
          pending.delete(event.data.id)
          break
        case 'inbox/discard':
          for (const id of event.data.ids) pending.delete(id)
          break
        case 'inbox/requeue': {
          const message = pending.get(event.data.id)
          if (!message) break
          pending.delete(event.data.id)
          pending.set(event.data.id, deepFreeze({ ...message, target: 'next-turn', wakeup: true }))
          break
        }
      }
    }
    this.turnColumn = []
    this.stepColumn = []
    for (const message of pending.values()) {
      ;(message.target === 'next-turn' ? this.turnColumn : this.stepColumn).push(message)
    }
    this.view = undefined
  }

  private remove(message: AgentMessage): boolean {
    const column = message.target === 'next-turn' ? this.turnColumn : this.stepColumn
    const index = column.indexOf(message)
    if (index < 0) return false
    column.splice(index, 1)
    this.view = undefined
    return true
  }
}
