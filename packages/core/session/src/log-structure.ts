import type { ContentBlock, ToolCallBlock } from '@deepseek-ai/dsh-llm'
import { Kind } from './built-in-types'
import { SessionError } from './errors'
import type { SlotList } from './log/slot-list'
import type { SessionPosition } from './session'
import type { TurnTrigger } from './types'

const initial: SessionPosition = Object.freeze({ lastTurn: 0, lastStep: 0 })

/**
 * The structural invariants of a log (R-SES-4), checked one event at a time.
 *
 * `check` throws a `SessionError` (`INVARIANT`) and changes nothing; `apply`
 * records an event that passed `check` (the session calls it only once the
 * event is committed). The state is O(1) apart from the tool calls of the open
 * step, so checking costs O(1) per event (O(calls) for an assistant message).
 *
 * The rules:
 * - the first event is `session/meta`;
 * - turns are numbered by one across the session, steps by one within a turn,
 *   properly nested, and `step/end` comes before `turn/end`;
 * - `assistant/*`, `tool/*` and `request/header` sit inside a step, and the
 *   ones that carry `turn`/`step` name the open step;
 * - `user/message` and `steering/message` sit inside a turn;
 * - an `injection` turn holds no step and, of the turn-structured types, only
 *   `user/message`s;
 * - a step has at most one `assistant/message` (one model call per step; a
 *   retry opens a new step); its `chunkSeqs` point at this step's
 *   `assistant/chunk` events in increasing order (except in a fork's seed,
 *   whose events keep the numbering of the log they were copied from);
 * - every tool call of that message gets exactly one `tool/call` and one
 *   `tool/result`, each in model order, the result after its call, all before
 *   `step/end`;
 * - `session/meta`, `inbox/*`, `todo/write` and merged types may appear anywhere.
 */
export class LogStructure {
  /** The last seq of a forked session's seed (from `session/meta.seedLength`); 0 when there is none. */
  private seedEnd = 0
  /*
   * The position as scalars (turns and steps are numbered from 1, so 0 means
   * "none"): `check` and `apply` read and write numbers, and the frozen
   * `SessionPosition` is built only when someone asks for it (`position`).
   */
  /** Read by `SessionLog.lastTurn` (not written outside this class). */
  lastTurn = 0
  private openTurn = 0
  /** The open turn's trigger (its `turn/start` data's, frozen), while a turn is open. */
  private openTrigger: TurnTrigger | undefined
  private lastStep = 0
  private openStep = 0
  /** The position as last built, until the next event that moves it. */
  private cached: SessionPosition | undefined = initial
  private trigger: string | undefined
  private stepStartSeq = -1
  private anchored = false
  /** The tool-call blocks of the open step's `assistant/message`, in model order (the message's own frozen blocks). */
  private calls: readonly ToolCallBlock[] = noCalls
  private called = 0
  private answered = 0
  private staged: readonly ToolCallBlock[] = noCalls

  /** Where the log stands, as a frozen object: the same object until an event moves it. */
  get position(): SessionPosition {
    return (this.cached ??= this.buildPosition())
  }

  /**
   * Records a fresh log's own `session/meta` at seq 0 (`SessionLog.admitMeta`):
   * what `apply` does for it, at creation. A replayed log's first event still
   * goes through `check` and `apply`.
   */
  openLog(seedLength: number | undefined): void {
    if (seedLength !== undefined) this.seedEnd = seedLength
  }

  /** Throws `INVARIANT` when an event of `kind` with `data` cannot come next at `seq`. */
  check(kind: Kind | undefined, type: string, data: any, seq: number, slots: SlotList): void {
    if (seq === 0) {
      if (kind !== Kind.Meta) throw invariant(type, seq, 'the first event of a session must be session/meta')
      return
    }
    if (kind === undefined) return
    const openTurn = this.openTurn
    switch (kind) {
      case Kind.TurnStart:
        if (openTurn !== 0) throw invariant(type, seq, `turn ${openTurn} is still open: write its turn/end first`)
        if (data.turn !== this.lastTurn + 1) {
          throw invariant(type, seq, `turns are numbered by one: expected turn ${this.lastTurn + 1}, got ${data.turn}`)
        }
        return
      case Kind.TurnEnd:
        if (openTurn === 0) throw invariant(type, seq, 'no turn is open')
        if (data.turn !== openTurn) throw invariant(type, seq, `turn ${openTurn} is open, not turn ${data.turn}`)
        if (this.openStep !== 0) throw invariant(type, seq, `step ${this.openStep} of turn ${openTurn} is still open: write its step/end first`)
        return
      case Kind.StepStart:
        if (openTurn === 0) throw invariant(type, seq, 'a step must be inside a turn, and no turn is open')
        if (this.trigger === 'injection') throw invariant(type, seq, `turn ${openTurn} is an injection turn, which holds no step`)
        if (this.openStep !== 0) throw invariant(type, seq, `step ${this.openStep} is still open: write its step/end first`)
        if (data.turn !== openTurn) throw invariant(type, seq, `turn ${openTurn} is open, not turn ${data.turn}`)
        if (data.step !== this.lastStep + 1) {
          throw invariant(type, seq, `steps are numbered by one within a turn: expected step ${this.lastStep + 1}, got ${data.step}`)
        }
        return
      case Kind.StepEnd: {
        this.inStep(type, seq, data)
        const called = this.called
        const answered = this.answered
        const missing = this.calls[called < answered ? called : answered]
        if (missing !== undefined) {
          const what = called <= answered ? 'tool/call' : 'tool/result'
          throw invariant(type, seq, `tool call ${JSON.stringify(missing.id)} (${missing.name}) has no ${what} yet: every call of the step's assistant/message needs one tool/call and one tool/result before step/end`)
        }
        return
      }
      case Kind.UserMessage:
        if (openTurn === 0) throw invariant(type, seq, 'a user/message must be inside a turn, and no turn is open')
        return
      case Kind.SteeringMessage:
        if (openTurn === 0) throw invariant(type, seq, 'a steering/message must be inside a turn, and no turn is open')
        if (this.trigger === 'injection') throw invariant(type, seq, `turn ${openTurn} is an injection turn, which holds only user/messages`)
        return
      case Kind.AssistantChunk:
        this.inStep(type, seq, data)
        return
      case Kind.AssistantMessage:
        this.inStep(type, seq, data)
        if (this.anchored) {
          throw invariant(type, seq, `step ${data.step} of turn ${data.turn} already has its assistant/message (one model call per step; a retry opens a new step)`)
        }
        // Seeded events keep the numbering of the log they were copied from.
        if (seq > this.seedEnd) this.checkChunkSeqs(type, seq, data.chunkSeqs, slots)
        this.staged = callsOf(type, seq, data.message.content)
        return
      case Kind.ToolCall: {
        this.inStep(type, seq, data)
        // The one call that may come next (call ids are unique within a message): anything else is refused below.
        const expected = this.calls[this.called]
        if (this.anchored && expected !== undefined && expected.id === data.callId && expected.name === data.name) return
        throw this.callRefused(type, seq, data.callId, data.name)
      }
      case Kind.ToolResult: {
        this.inStep(type, seq, data)
        const callId = (data.message.content[0] as { toolCallId: string }).toolCallId
        const expected = this.answered < this.called ? this.calls[this.answered] : undefined
        if (expected !== undefined && expected.id === callId) return
        throw this.resultRefused(type, seq, callId)
      }
      case Kind.RequestHeader:
        if (this.openStep === 0) throw invariant(type, seq, 'a request/header must be inside a step, and no step is open')
        return
      default:
        // session/meta, todo/write and inbox/* may appear anywhere.
        return
    }
  }

  /** `check` for an `assistant/chunk` of step `step` of turn `turn` (its only rule: it sits inside that step). */
  checkChunk(turn: number, step: number, seq: number): void {
    if (seq === 0) throw invariant('assistant/chunk', seq, 'the first event of a session must be session/meta')
    if (this.openStep === 0 || this.openTurn !== turn || this.openStep !== step) this.inStep('assistant/chunk', seq, { turn, step })
  }

  /** Records an event that passed `check`. */
  apply(kind: Kind | undefined, data: any, seq: number): void {
    switch (kind) {
      case Kind.Meta:
        if (seq === 0 && data.seedLength !== undefined) this.seedEnd = data.seedLength
        return
      case Kind.TurnStart:
        this.trigger = (data.trigger as TurnTrigger).kind
        this.openTrigger = data.trigger
        this.lastTurn = data.turn
        this.openTurn = data.turn
        this.lastStep = 0
        this.cached = undefined
        return
      case Kind.TurnEnd:
        this.trigger = undefined
        this.openTrigger = undefined
        this.openTurn = 0
        this.lastStep = 0
        this.cached = undefined
        return
      case Kind.StepStart:
        this.stepStartSeq = seq
        this.openStep = data.step
        this.lastStep = data.step
        this.cached = undefined
        return
      case Kind.StepEnd:
        this.stepStartSeq = -1
        this.anchored = false
        this.calls = noCalls
        this.called = 0
        this.answered = 0
        this.openStep = 0
        this.cached = undefined
        return
      case Kind.AssistantMessage:
        this.anchored = true
        this.calls = this.staged
        this.staged = noCalls
        return
      case Kind.ToolCall:
        this.called++
        return
      case Kind.ToolResult:
        this.answered++
        return
    }
  }

  private buildPosition(): SessionPosition {
    const { lastTurn, openTurn, lastStep, openStep } = this
    if (openTurn === 0) return Object.freeze({ lastTurn, lastStep })
    const open = Object.freeze({ turn: openTurn, trigger: this.openTrigger! })
    if (openStep === 0) return Object.freeze({ lastTurn, openTurn: open, lastStep })
    return Object.freeze({ lastTurn, openTurn: open, openStep: Object.freeze({ turn: openTurn, step: openStep }), lastStep })
  }

  private inStep(type: string, seq: number, data: any): void {
    const step = this.openStep
    if (step === 0) throw invariant(type, seq, `${type} must be inside a step, and no step is open`)
    if (data.turn !== this.openTurn || data.step !== step) {
      throw invariant(type, seq, `step ${step} of turn ${this.openTurn} is open, but the event names step ${data.step} of turn ${data.turn}`)
    }
  }

  /** Why a `tool/call` for `callId` named `name` cannot come next (the step is open and names it). */
  private callRefused(type: string, seq: number, callId: string, name: string): SessionError {
    if (!this.anchored) return invariant(type, seq, "a tool/call must follow its step's assistant/message")
    const index = this.calls.findIndex((call) => call.id === callId)
    if (index < 0) return invariant(type, seq, `call ${JSON.stringify(callId)} is not a tool call of this step's assistant/message`)
    if (index < this.called) return invariant(type, seq, `call ${JSON.stringify(callId)} already has its tool/call`)
    const expected = this.calls[this.called]!
    if (index !== this.called) {
      return invariant(type, seq, `tool/calls follow model order: expected call ${JSON.stringify(expected.id)} (${expected.name}) first`)
    }
    return invariant(type, seq, `call ${JSON.stringify(expected.id)} is named ${JSON.stringify(expected.name)} in the assistant message, not ${JSON.stringify(name)}`)
  }

  /** Why a `tool/result` for `callId` cannot come next (the step is open and names it). */
  private resultRefused(type: string, seq: number, callId: string): SessionError {
    const index = this.calls.findIndex((call) => call.id === callId)
    if (index < 0) return invariant(type, seq, `call ${JSON.stringify(callId)} is not a tool call of this step's assistant/message`)
    if (index < this.answered) return invariant(type, seq, `call ${JSON.stringify(callId)} already has its tool/result`)
    if (index >= this.called) return invariant(type, seq, `the tool/result for call ${JSON.stringify(callId)} comes before its tool/call`)
    return invariant(type, seq, `tool/results follow model order: expected the result of call ${JSON.stringify(this.calls[this.answered]!.id)} first`)
  }

  private checkChunkSeqs(type: string, seq: number, chunkSeqs: readonly number[], slots: SlotList): void {
    let previous = this.stepStartSeq
    for (let i = 0; i < chunkSeqs.length; i++) {
      const chunkSeq = chunkSeqs[i]!
      if (chunkSeq <= previous || chunkSeq >= seq || !slots.isChunk(chunkSeq)) {
        throw invariant(type, seq, `data.chunkSeqs[${i}] = ${chunkSeq} is not an assistant/chunk of this step after the previous one`)
      }
      previous = chunkSeq
    }
  }
}

/** No tool calls (a step before its message, or a message without calls): shared, never written. */
const noCalls: readonly ToolCallBlock[] = Object.freeze([])

/**
 * The tool-call blocks of a message's content, in order (the blocks
 * themselves: they are frozen with the message); the shared empty list when
 * there are none. Refuses a call id named twice.
 */
function callsOf(type: string, seq: number, content: readonly ContentBlock[]): readonly ToolCallBlock[] {
  let calls: ToolCallBlock[] | undefined
  for (let i = 0; i < content.length; i++) {
    const block = content[i]!
    if (block.type !== 'tool-call') continue
    if (calls === undefined) {
      calls = [block]
      continue
    }
    for (let j = 0; j < calls.length; j++) {
      if (calls[j]!.id === block.id) throw invariant(type, seq, `the assistant message names tool call ${JSON.stringify(block.id)} twice`)
    }
    calls.push(block)
  }
  return calls ?? noCalls
}

function invariant(type: string, seq: number, reason: string): SessionError {
  return new SessionError('INVARIANT', `cannot append ${type} at seq ${seq}: ${reason}`, { seq, type })
}
