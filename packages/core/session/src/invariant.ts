import type { InvariantViolation, Invariants } from '@deepseek-ai/dsh-invariants'
import type { Context } from './cordis'
import type { Session } from './session'
import type { AnySessionEvent } from './types'
// The declarations this entry relies on (ctx.sessions, session/* events), for its own .d.ts build.
import type {} from './events'
import type {} from './service'

/** The name this companion registers with `ctx.invariants`. */
export const LOG_STRUCTURE = 'session/log-structure'

/** The `details` of every `session/log-structure` violation. */
export interface LogStructureDetails {
  readonly session: string
  /** The seq the event is at (its index in the log), or where the problem was found. */
  readonly seq: number
  /** The event's type (`check` when `check()` found it outside any event). */
  readonly type: string
}

interface OpenTurn {
  readonly turn: number
  readonly injection: boolean
  /** The number of the last step opened in this turn. */
  lastStep: number
}

interface OpenStep {
  readonly turn: number
  readonly step: number
  /** Whether the step's `assistant/message` was written. */
  answered: boolean
  /** The tool calls of that message, in model order. */
  calls: readonly { readonly id: string; readonly name: string }[]
  /** The calls that have their `tool/call`, and their `tool/result`. */
  readonly called: Set<string>
  readonly resulted: Set<string>
}

/** The first call, in model order, that `done` does not hold. */
function firstMissing(calls: OpenStep['calls'], done: ReadonlySet<string>) {
  return calls.find((call) => !done.has(call.id))
}

/**
 * The structure of one session's log, re-derived event by event: a second,
 * independent reading of R-SES-4 (turn and step numbering and nesting, what
 * sits inside a turn or a step, one `assistant/message` per step, tool calls
 * paired with one `tool/call` and one `tool/result` each, in model order,
 * before `step/end`). It reports instead of refusing, and keeps going.
 */
class LogShape {
  /** The seq of the next event expected. */
  next = 0
  private lastTurn = 0
  private turn: OpenTurn | undefined
  private step: OpenStep | undefined

  /** The problems of `event`, read at index `index` of the log. */
  read(event: AnySessionEvent, index: number): string[] {
    const problems: string[] = []
    if (event.seq !== index) problems.push(`its seq is ${String(event.seq)}, but it is event ${index} of the log (seq must equal the index)`)
    if (index === 0 && event.type !== 'session/meta') problems.push('the first event of a session must be session/meta')
    const unfrozen = unfrozenPath(event, 'event')
    if (unfrozen !== undefined) problems.push(`${unfrozen} is not frozen`)
    this.structure(event, problems)
    this.next = index + 1
    return problems
  }

  private structure(event: AnySessionEvent, problems: string[]): void {
    const turn = this.turn
    const step = this.step
    switch (event.type) {
      case 'turn/start': {
        const { turn: number, trigger } = event.data
        if (turn) problems.push(`turn ${turn.turn} is still open`)
        if (number !== this.lastTurn + 1) problems.push(`turn ${number} follows turn ${this.lastTurn} (turns are numbered by one)`)
        this.lastTurn = number
        this.turn = { turn: number, injection: trigger.kind === 'injection', lastStep: 0 }
        this.step = undefined
        return
      }
      case 'turn/end':
        if (!turn) problems.push('no turn is open')
        else if (event.data.turn !== turn.turn) problems.push(`it ends turn ${event.data.turn}, but turn ${turn.turn} is open`)
        if (step) problems.push(`step ${step.turn}.${step.step} is still open (step/end must come first)`)
        this.turn = undefined
        this.step = undefined
        return
      case 'step/start': {
        const { turn: number, step: index } = event.data
        if (!turn) problems.push('no turn is open')
        else {
          if (turn.injection) problems.push(`turn ${turn.turn} is an injection turn, which holds no step`)
          if (number !== turn.turn) problems.push(`it names turn ${number}, but turn ${turn.turn} is open`)
          if (index !== turn.lastStep + 1) problems.push(`step ${index} follows step ${turn.lastStep} (steps are numbered by one within a turn)`)
          turn.lastStep = index
        }
        if (step) problems.push(`step ${step.turn}.${step.step} is still open`)
        this.step = { turn: number, step: index, answered: false, calls: [], called: new Set(), resulted: new Set() }
        return
      }
      case 'step/end': {
        if (!this.inStep(event, problems)) return
        const uncalled = firstMissing(step!.calls, step!.called)
        const unanswered = firstMissing(step!.calls, step!.resulted)
        if (uncalled) problems.push(`tool call ${JSON.stringify(uncalled.id)} has no tool/call`)
        else if (unanswered) problems.push(`tool call ${JSON.stringify(unanswered.id)} has no tool/result`)
        this.step = undefined
        return
      }
      case 'user/message':
        if (!turn) problems.push('it must be inside a turn, and no turn is open')
        return
      case 'steering/message':
        if (!turn) problems.push('it must be inside a turn, and no turn is open')
        else if (turn.injection) problems.push(`turn ${turn.turn} is an injection turn, which holds only user/messages`)
        return
      case 'assistant/chunk':
        this.inStep(event, problems)
        return
      case 'assistant/message':
        if (!this.inStep(event, problems)) return
        if (step!.answered) problems.push(`step ${step!.turn}.${step!.step} already has its assistant/message`)
        step!.answered = true
        step!.calls = event.data.message.content.flatMap((block) => (block.type === 'tool-call' ? [{ id: block.id, name: block.name }] : []))
        // Call ids are held in sets: a duplicate would pass with one tool/call and one tool/result for both.
        for (let i = 1; i < step!.calls.length; i++) {
          const id = step!.calls[i]!.id
          if (step!.calls.findIndex((call) => call.id === id) < i) problems.push(`the assistant message names tool call ${JSON.stringify(id)} twice`)
        }
        step!.called.clear()
        step!.resulted.clear()
        return
      case 'tool/call': {
        if (!this.inStep(event, problems)) return
        const { callId, name } = event.data
        const call = step!.calls.find((candidate) => candidate.id === callId)
        const expected = firstMissing(step!.calls, step!.called)
        if (!call) problems.push(`call ${JSON.stringify(callId)} is not a tool call of this step's assistant/message`)
        else if (step!.called.has(callId)) problems.push(`call ${JSON.stringify(callId)} already has its tool/call`)
        else if (call !== expected) problems.push(`expected the tool/call of ${JSON.stringify(expected!.id)} (${expected!.name}) next, in model order`)
        else if (call.name !== name) problems.push(`call ${JSON.stringify(callId)} is named ${JSON.stringify(call.name)} in the assistant/message, not ${JSON.stringify(name)}`)
        step!.called.add(callId)
        return
      }
      case 'tool/result': {
        if (!this.inStep(event, problems)) return
        const block = event.data.message.content[0]
        const callId = block?.type === 'tool-result' ? block.toolCallId : undefined
        const call = step!.calls.find((candidate) => candidate.id === callId)
        const expected = firstMissing(step!.calls, step!.resulted)
        if (!call || callId === undefined) problems.push(`its result (for ${JSON.stringify(callId)}) answers no tool call of this step's assistant/message`)
        else if (step!.resulted.has(callId)) problems.push(`call ${JSON.stringify(callId)} already has its tool/result`)
        else if (!step!.called.has(callId)) problems.push(`the tool/result of ${JSON.stringify(callId)} comes before its tool/call`)
        else if (call !== expected) problems.push(`expected the tool/result of ${JSON.stringify(expected!.id)} next, in model order`)
        if (callId !== undefined) step!.resulted.add(callId)
        return
      }
      case 'request/header':
        if (!step) problems.push('it must be inside a step, and no step is open')
        return
      default:
        // session/meta, todo/write, inbox/* and merged types may appear anywhere.
        return
    }
  }

  /** Whether a step is open and `event` names it; reports otherwise. */
  private inStep(event: AnySessionEvent & { data: { turn: number; step: number } }, problems: string[]): boolean {
    const step = this.step
    if (!step) {
      problems.push('it must be inside a step, and no step is open')
      return false
    }
    if (event.data.turn !== step.turn || event.data.step !== step.step) {
      problems.push(`it names step ${event.data.turn}.${event.data.step}, but step ${step.turn}.${step.step} is open`)
    }
    return true
  }
}

/** The path of the first value in `value` that is not frozen, if any (JSON data: plain objects and arrays). */
function unfrozenPath(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined
  if (!Object.isFrozen(value)) return path
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const inner = unfrozenPath(value[i], `${path}[${i}]`)
      if (inner !== undefined) return inner
    }
    return undefined
  }
  for (const key in value) {
    const inner = unfrozenPath((value as Record<string, unknown>)[key], `${path}.${key}`)
    if (inner !== undefined) return inner
  }
  return undefined
}

/**
 * `@deepseek-ai/dsh-session/invariant`: the structure of every live session's
 * log, re-checked from the outside.
 *
 * For each event a live session publishes (`session/event`): its `seq` is
 * its index and the next one, it is the log's entry there, it is deep-frozen,
 * the log starts with `session/meta`, turns and steps are numbered and nested
 * as R-SES-4 says, and the tool calls of each step's `assistant/message`
 * (each id named once) get one `tool/call` and one `tool/result` each, in
 * model order, before `step/end`. A `session/event` for a session after its `session/disposed` is
 * a violation. A session's events from before its publication (a loaded or
 * forked prefix) are read once, when it is first seen. `check()` reads any
 * event that was appended without being published and reports it.
 *
 * Cost: O(1) per event plus a walk of the event's data to check it is
 * frozen (what validating it on append costs again); the tool calls of the
 * open step are the only state that grows. A loaded session is read once in
 * full when it is published.
 */
export const LogStructureInvariant = {
  name: 'dsh-session/invariant',
  inject: ['invariants', 'sessions'],
  apply(ctx: Context): void {
    // Reaching a service through a context is costly in Cordis: hold them once.
    const { invariants, sessions } = ctx
    const shapes = new WeakMap<Session, LogShape>()
    /** Sessions announced by `session/created` and not disposed (`check()` also reads `ctx.sessions.list()`). */
    const announced = new Set<Session>()
    const disposed = new WeakSet<Session>()

    const violation = (session: Session, seq: number, type: string, message: string): InvariantViolation => {
      const details: LogStructureDetails = { session: session.id, seq, type }
      return { invariant: LOG_STRUCTURE, message: `session ${JSON.stringify(session.id)}, seq ${seq} (${type}): ${message}`, details }
    }
    // From a listener, a violation is noticed, never thrown: the dispatch is contained.
    const report = (found: readonly InvariantViolation[]): void => {
      for (const item of found) invariants.notice(item)
    }
    /** Reads the log of `session` from where its shape stands up to (not including) `end`. */
    const readUpTo = (session: Session, shape: LogShape, end: number, found: InvariantViolation[]): void => {
      const events = session.events
      for (let index = shape.next; index < end; index++) {
        const event = events[index]!
        for (const problem of shape.read(event, index)) found.push(violation(session, index, event.type, problem))
      }
    }
    /** The shape of `session`, reading its whole log up to `end` the first time it is seen. */
    const shapeOf = (session: Session, end: number, found: InvariantViolation[]): LogShape => {
      let shape = shapes.get(session)
      if (!shape) {
        shapes.set(session, (shape = new LogShape()))
        readUpTo(session, shape, end, found)
      }
      return shape
    }

    ctx.on('session/created', (session) => {
      announced.add(session)
      const found: InvariantViolation[] = []
      shapeOf(session, session.events.length, found)
      if (found.length) report(found)
    })

    // Observed without Cordis' tracing wrapper: this runs for every streamed chunk.
    sessions.observe((session, event) => {
      const found: InvariantViolation[] = []
      if (disposed.has(session)) {
        found.push(violation(session, event.seq, event.type, 'published after session/disposed'))
      } else {
        const index = session.events[event.seq] === event ? event.seq : session.events.lastIndexOf(event)
        const shape = shapeOf(session, index < 0 ? session.events.length : index, found)
        if (index < 0) found.push(violation(session, event.seq, event.type, 'it is not an entry of the session log'))
        else if (index < shape.next) found.push(violation(session, index, event.type, 'published again, or out of order'))
        else {
          if (index > shape.next) {
            found.push(violation(session, index, event.type, `events ${shape.next} to ${index - 1} were never published (session/event skipped them)`))
          }
          readUpTo(session, shape, index, found)
          for (const problem of shape.read(event, index)) found.push(violation(session, index, event.type, problem))
        }
      }
      if (found.length) report(found)
    })

    ctx.on('session/disposed', (session) => {
      disposed.add(session)
      announced.delete(session)
      shapes.delete(session)
    })

    invariants.register(LOG_STRUCTURE, () => {
      const found: InvariantViolation[] = []
      for (const session of new Set([...announced, ...sessions.list()])) {
        const known = shapes.has(session)
        const shape = shapeOf(session, 0, found)
        const end = session.events.length
        if (known && shape.next < end) {
          found.push(violation(session, shape.next, 'check', `events ${shape.next} to ${end - 1} were appended without session/event`))
        }
        readUpTo(session, shape, end, found)
      }
      return found
    })
  },
}

export default LogStructureInvariant
