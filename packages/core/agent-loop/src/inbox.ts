import type { AgentEventEmitter, AgentMessage, Inbox } from '@deepseek-ai/dsh-agent'
import { deepFreeze, type MessageId } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'
import type { BuiltLogWriter } from './failure'

/**
 * One announcement, reserved before its log event is appended and filled
 * once the append succeeded: which `agent/inbox/*` event, with what. Data,
 * not closures: a transition costs this one small object.
 */
interface Slot {
  kind: 'enqueue' | 'dequeue' | 'discard' | undefined
  message: AgentMessage | undefined
  dropped: readonly AgentMessage[] | undefined
}

/**
 * An empty column with room for one message. V8 gives an empty array's first
 * `push` a backing store of 17 entries and drops a store of 17 or more when a
 * `shift` empties the array again, but keeps a store of one entry: so a
 * column that holds one message at a time (a prompt admitted, then claimed:
 * every turn) reuses this entry instead of getting a new store per message
 * while the code runs unoptimized.
 */
function emptyColumn(): AgentMessage[] {
  const column = [undefined as unknown as AgentMessage]
  column.pop()
  return column
}

/**
 * The agent's two FIFOs and their durable projection.
 *
 * Every transition updates the columns, then logs its `inbox/*` session event,
 * then announces its `agent/inbox/*` event, so the log alone can rebuild what
 * is pending after a crash and every id gets at most one dequeue or discard.
 *
 * Reentrancy: a synchronous `session/event` listener may admit, claim or
 * discard while a transition is being logged. The columns are updated before
 * the append, so a nested transition sees them current and lands behind; and
 * announcements go through a FIFO of slots reserved before each append, so
 * listeners of `agent/inbox/*` hear the transitions in log order even when a
 * nested one finishes first.
 *
 * A transition whose log event is refused is undone in the columns, so
 * memory keeps agreeing with the log (the item stays pending in both).
 */
export class InboxState {
  private turnColumn: AgentMessage[] = emptyColumn()
  private stepColumn: AgentMessage[] = emptyColumn()
  private view: Inbox | undefined
  /**
   * The announcement FIFO: the slots from `head` to `tail` (exclusive), the
   * entries outside that range `undefined`. Indices, not `push`/`shift`: V8
   * gives an array's first `push` a backing store of 17 entries and drops it
   * when a `shift` empties the array, so a `push`/`shift` queue that empties
   * after every transition (the usual case: two transitions a turn) made a
   * new backing store each time while the code ran unoptimized. Here the
   * array only grows, to the most announcements ever pending at once.
   */
  private readonly slots: Array<Slot | undefined> = []
  private head = 0
  private tail = 0
  /** A slot whose announcement went out, handed to the next `reserve` (one small object less per transition). */
  private spare: Slot | undefined = undefined
  private draining = false

  constructor(
    private readonly log: BuiltLogWriter,
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
    const column = message.target === 'next-turn' ? this.turnColumn : this.stepColumn
    column.push(message)
    this.view = undefined
    const slot = this.reserve()
    try {
      // An admitted message: validated and deep-frozen by admission. The data is frozen here (see `appendBuilt`'s
      // callers in turn.ts): the log then has nothing to walk.
      this.log.appendBuilt('inbox/enqueue', Object.freeze({ message }))
    } catch (error) {
      this.remove(message)
      this.release(slot)
      throw error
    }
    this.announce(slot, 'enqueue', message, undefined)
  }

  /** Claims the oldest ordinary item. */
  claimTurn(): AgentMessage | undefined {
    const message = this.turnColumn[0]
    return message && this.dequeue(message) ? message : undefined
  }

  /** Claims one item. Returns false (and does nothing) when it is no longer pending. */
  dequeue(message: AgentMessage): boolean {
    const index = this.remove(message)
    if (index < 0) return false
    const slot = this.reserve()
    try {
      this.log.appendBuilt('inbox/dequeue', Object.freeze({ id: message.id }))
    } catch (error) {
      // Refused: the item is pending again, where it was (a nested transition's changes stay).
      const now = message.target === 'next-turn' ? this.turnColumn : this.stepColumn
      if (!now.includes(message)) now.splice(Math.min(index, now.length), 0, message)
      this.view = undefined
      this.release(slot)
      throw error
    }
    this.announce(slot, 'dequeue', message, undefined)
    return true
  }

  /** Drops the given pending items (those no longer pending are skipped). */
  discard(messages: readonly AgentMessage[]): void {
    const restore = this.snapshot()
    const dropped = messages.filter((message) => this.remove(message) >= 0)
    if (dropped.length === 0) return
    const slot = this.reserve()
    try {
      this.log.append('inbox/discard', { ids: dropped.map((message) => message.id) })
    } catch (error) {
      restore()
      this.release(slot)
      throw error
    }
    this.announce(slot, 'discard', undefined, dropped)
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
    while (this.stepColumn.length) {
      const restore = this.snapshot()
      const message = this.stepColumn.shift()!
      this.turnColumn.push(deepFreeze({ ...message, target: 'next-turn' as const, wakeup: true }))
      this.view = undefined
      try {
        this.log.append('inbox/requeue', { id: message.id })
      } catch (error) {
        restore()
        throw error
      }
    }
  }

  /**
   * Rebuilds the pending items from a log (resume), reading from `from` (past
   * a fork's seed). Items keep their order; they stay parked until the next
   * wakeup.
   */
  rebuild(session: Session, from = 0): void {
    const pending = new Map<MessageId, AgentMessage>()
    const events = session.events
    for (let i = from, length = events.length; i < length; i++) {
      // Only inbox events matter: the type is read first, so packed chunks are never rebuilt.
      const type = session.typeAt(i)
      if (type !== 'inbox/enqueue' && type !== 'inbox/dequeue' && type !== 'inbox/discard' && type !== 'inbox/requeue') continue
      const event = events[i]!
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
    this.turnColumn = emptyColumn()
    this.stepColumn = emptyColumn()
    for (const message of pending.values()) {
      ;(message.target === 'next-turn' ? this.turnColumn : this.stepColumn).push(message)
    }
    this.view = undefined
  }

  /** Reserves the next announcement's place before its transition is appended (log order, see the class comment). */
  private reserve(): Slot {
    let slot = this.spare
    if (slot === undefined) slot = { kind: undefined, message: undefined, dropped: undefined }
    else this.spare = undefined
    this.slots[this.tail++] = slot
    return slot
  }

  /** A refused transition gives its place up; the announcements behind it go out. */
  private release(slot: Slot): void {
    const slots = this.slots
    const tail = this.tail - 1
    let i = this.head
    while (slots[i] !== slot) i++
    for (; i < tail; i++) slots[i] = slots[i + 1]
    slots[tail] = undefined
    this.tail = tail
    if (this.head === tail) this.head = this.tail = 0
    this.drain()
  }

  /** The transition was logged: its announcement goes out once every earlier one did. */
  private announce(slot: Slot, kind: NonNullable<Slot['kind']>, message: AgentMessage | undefined, dropped: readonly AgentMessage[] | undefined): void {
    slot.kind = kind
    slot.message = message
    slot.dropped = dropped
    this.drain()
  }

  private drain(): void {
    if (this.draining) return
    this.draining = true
    try {
      const slots = this.slots
      let slot: Slot | undefined
      while (this.head < this.tail && (slot = slots[this.head]!).kind) {
        slots[this.head++] = undefined
        if (this.head === this.tail) this.head = this.tail = 0
        const { kind, message, dropped } = slot
        // Emptied and handed on before the emit: a listener's transition may reserve it at once.
        slot.kind = undefined
        slot.message = undefined
        slot.dropped = undefined
        this.spare = slot
        if (kind === 'enqueue') this.events.emit('agent/inbox/enqueue', message!)
        else if (kind === 'dequeue') this.events.emit('agent/inbox/dequeue', message!)
        else this.events.emit('agent/inbox/discard', dropped!)
      }
    } finally {
      this.draining = false
    }
  }

  /** Restores both columns as they are now (a refused transition is undone with it). */
  private snapshot(): () => void {
    const turn = this.turnColumn.slice()
    const step = this.stepColumn.slice()
    return () => {
      this.turnColumn = turn
      this.stepColumn = step
      this.view = undefined
    }
  }

  /** Takes `message` out of its column; returns where it was, or -1 when it is no longer pending. */
  private remove(message: AgentMessage): number {
    const column = message.target === 'next-turn' ? this.turnColumn : this.stepColumn
    const index = column.indexOf(message)
    if (index < 0) return -1
    if (index === 0) column.shift()
    else column.splice(index, 1)
    this.view = undefined
    return index
  }
}
