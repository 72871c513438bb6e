import type { CallId, ContentBlock } from '@deepseek-ai/dsh-llm'
import { Kind } from './built-in-types'
import { SessionError } from './errors'
import { isChunkAt, type Slot } from './log/slots'
import type { SessionPosition } from './session'
import type { TurnTrigger } from './types'

interface PendingCall {
  readonly id: CallId
  readonly name: string
}

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
  position: SessionPosition = initial
  /** The last seq of a forked session's seed (from `session/meta.seedLength`); 0 when there is none. */
  private seedEnd = 0
  private trigger: string | undefined
  private stepStartSeq = -1
  private anchored = false
  private calls: readonly PendingCall[] = []
  private called = 0
  private answered = 0
  private staged: readonly PendingCall[] = []

  /**
   * Records a fresh log's own `session/meta` at seq 0 (`SessionLog.admitMeta`):
   * what `apply` does for it, at creation. A replayed log's first event still
   * goes through `check` and `apply`.
   */
  openLog(seedLength: number | undefined): void {
    if (seedLength !== undefined) this.seedEnd = seedLength
  }

  /** Throws `INVARIANT` when an event of `kind` with `data` cannot come next at `seq`. */
  check(kind: Kind | undefined, type: string, data: any, seq: number, slots: readonly Slot[]): void {
    if (seq === 0) {
      if (kind !== Kind.Meta) throw invariant(type, seq, 'the first event of a session must be session/meta')
      return
    }
    if (kind === undefined) return
    const { openTurn, openStep, lastTurn, lastStep } = this.position
    switch (kind) {
      case Kind.TurnStart:
        if (openTurn) throw invariant(type, seq, `turn ${openTurn.turn} is still open: write its turn/end first`)
        if (data.turn !== lastTurn + 1) {
          throw invariant(type, seq, `turns are numbered by one: expected turn ${lastTurn + 1}, got ${data.turn}`)
        }
        return
      case Kind.TurnEnd:
        if (!openTurn) throw invariant(type, seq, 'no turn is open')
        if (data.turn !== openTurn.turn) throw invariant(type, seq, `turn ${openTurn.turn} is open, not turn ${data.turn}`)
        if (openStep) throw invariant(type, seq, `step ${openStep.step} of turn ${openStep.turn} is still open: write its step/end first`)
        return
      case Kind.StepStart:
        if (!openTurn) throw invariant(type, seq, 'a step must be inside a turn, and no turn is open')
        if (this.trigger === 'injection') throw invariant(type, seq, `turn ${openTurn.turn} is an injection turn, which holds no step`)
        if (openStep) throw invariant(type, seq, `step ${openStep.step} is still open: write its step/end first`)
        if (data.turn !== openTurn.turn) throw invariant(type, seq, `turn ${openTurn.turn} is open, not turn ${data.turn}`)
        if (data.step !== lastStep + 1) {
          throw invariant(type, seq, `steps are numbered by one within a turn: expected step ${lastStep + 1}, got ${data.step}`)
        }
        return
      case Kind.StepEnd: {
        this.inStep(type, seq, data)
        const missing = this.calls[Math.min(this.called, this.answered)]
        if (missing) {
          const what = this.called <= this.answered ? 'tool/call' : 'tool/result'
          throw invariant(type, seq, `tool call ${JSON.stringify(missing.id)} (${missing.name}) has no ${what} yet: every call of the step's assistant/message needs one tool/call and one tool/result before step/end`)
        }
        return
      }
      case Kind.UserMessage:
        if (!openTurn) throw invariant(type, seq, 'a user/message must be inside a turn, and no turn is open')
        return
      case Kind.SteeringMessage:
        if (!openTurn) throw invariant(type, seq, 'a steering/message must be inside a turn, and no turn is open')
        if (this.trigger === 'injection') throw invariant(type, seq, `turn ${openTurn.turn} is an injection turn, which holds only user/messages`)
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
        if (!this.anchored) throw invariant(type, seq, "a tool/call must follow its step's assistant/message")
        const index = this.calls.findIndex((call) => call.id === data.callId)
        if (index < 0) throw invariant(type, seq, `call ${JSON.stringify(data.callId)} is not a tool call of this step's assistant/message`)
        if (index < this.called) throw invariant(type, seq, `call ${JSON.stringify(data.callId)} already has its tool/call`)
        const expected = this.calls[this.called]!
        if (index !== this.called) {
          throw invariant(type, seq, `tool/calls follow model order: expected call ${JSON.stringify(expected.id)} (${expected.name}) first`)
        }
        if (data.name !== expected.name) {
          throw invariant(type, seq, `call ${JSON.stringify(expected.id)} is named ${JSON.stringify(expected.name)} in the assistant message, not ${JSON.stringify(data.name)}`)
        }
        return
      }
      case Kind.ToolResult: {
        this.inStep(type, seq, data)
        const callId = (data.message.content[0] as { toolCallId: string }).toolCallId
        const index = this.calls.findIndex((call) => call.id === callId)
        if (index < 0) throw invariant(type, seq, `call ${JSON.stringify(callId)} is not a tool call of this step's assistant/message`)
        if (index < this.answered) throw invariant(type, seq, `call ${JSON.stringify(callId)} already has its tool/result`)
        if (index >= this.called) throw invariant(type, seq, `the tool/result for call ${JSON.stringify(callId)} comes before its tool/call`)
        if (index !== this.answered) {
          throw invariant(type, seq, `tool/results follow model order: expected the result of call ${JSON.stringify(this.calls[this.answered]!.id)} first`)
        }
        return
      }
      case Kind.RequestHeader:
        if (!openStep) throw invariant(type, seq, 'a request/header must be inside a step, and no step is open')
        return
      default:
        // session/meta, todo/write and inbox/* may appear anywhere.
        return
    }
  }

  /** `check` for an `assistant/chunk` of step `step` of turn `turn` (its only rule: it sits inside that step). */
  checkChunk(turn: number, step: number, seq: number): void {
    if (seq === 0) throw invariant('assistant/chunk', seq, 'the first event of a session must be session/meta')
    const open = this.position.openStep
    if (open === undefined || open.turn !== turn || open.step !== step) this.inStep('assistant/chunk', seq, { turn, step })
  }

  /** Records an event that passed `check`. */
  apply(kind: Kind | undefined, data: any, seq: number): void {
    switch (kind) {
      case Kind.Meta:
        if (seq === 0 && data.seedLength !== undefined) this.seedEnd = data.seedLength
        return
      case Kind.TurnStart:
        this.trigger = (data.trigger as TurnTrigger).kind
        this.position = Object.freeze({
          lastTurn: data.turn,
          openTurn: Object.freeze({ turn: data.turn, trigger: data.trigger }),
          lastStep: 0,
        })
        return
      case Kind.TurnEnd:
        this.trigger = undefined
        this.position = Object.freeze({ lastTurn: this.position.lastTurn, lastStep: 0 })
        return
      case Kind.StepStart:
        this.stepStartSeq = seq
        this.position = Object.freeze({
          ...this.position,
          openStep: Object.freeze({ turn: data.turn, step: data.step }),
          lastStep: data.step,
        })
        return
      case Kind.StepEnd: {
        this.stepStartSeq = -1
        this.anchored = false
        this.calls = []
        this.called = 0
        this.answered = 0
        const { openStep: _closed, ...rest } = this.position
        this.position = Object.freeze(rest)
        return
      }
      case Kind.AssistantMessage:
        this.anchored = true
        this.calls = this.staged
        this.staged = []
        return
      case Kind.ToolCall:
        this.called++
        return
      case Kind.ToolResult:
        this.answered++
        return
    }
  }

  private inStep(type: string, seq: number, data: any): void {
    const step = this.position.openStep
    if (!step) throw invariant(type, seq, `${type} must be inside a step, and no step is open`)
    if (data.turn !== step.turn || data.step !== step.step) {
      throw invariant(type, seq, `step ${step.step} of turn ${step.turn} is open, but the event names step ${data.step} of turn ${data.turn}`)
    }
  }

  private checkChunkSeqs(type: string, seq: number, chunkSeqs: readonly number[], slots: readonly Slot[]): void {
    let previous = this.stepStartSeq
    for (let i = 0; i < chunkSeqs.length; i++) {
      const chunkSeq = chunkSeqs[i]!
      if (chunkSeq <= previous || chunkSeq >= seq || !isChunkAt(slots, chunkSeq)) {
        throw invariant(type, seq, `data.chunkSeqs[${i}] = ${chunkSeq} is not an assistant/chunk of this step after the previous one`)
      }
      previous = chunkSeq
    }
  }
}

function callsOf(type: string, seq: number, content: readonly ContentBlock[]): PendingCall[] {
  const calls: PendingCall[] = []
  for (const block of content) {
    if (block.type !== 'tool-call') continue
    if (calls.some((call) => call.id === block.id)) {
      throw invariant(type, seq, `the assistant message names tool call ${JSON.stringify(block.id)} twice`)
    }
    calls.push({ id: block.id, name: block.name })
  }
  return calls
}

function invariant(type: string, seq: number, reason: string): SessionError {
  return new SessionError('INVARIANT', `cannot append ${type} at seq ${seq}: ${reason}`, { seq, type })
}
