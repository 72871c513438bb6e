import type { AgentMessage } from '@deepseek-ai/dsh-agent'
import type { Assembler, LlmFailure, ToolCallBlock } from '@deepseek-ai/dsh-llm'
import type { TurnEndReason, TurnTrigger } from '@deepseek-ai/dsh-session'
import { TurnHolder } from './cancellation'
import { ChunkSeqs } from './chunk-seqs'
import type { PlacedMessage } from './placement'
import type { ModelSource } from './request-config'
import type { ToolBatch } from './tool-batch'

/** One message of a step's proposed batch, with the event type it keeps if entered as is. */
export interface ProposedEntry {
  readonly placed: PlacedMessage
  readonly type: 'user/message' | 'steering/message'
  /** The inbox item the message comes from, for steering. */
  readonly item?: string
  /**
   * The message was placed from content the inbox admitted (validated and
   * deep-frozen then), so it may be logged without the check: true for a
   * prompt whose `agent/prompt-submit` decision kept the admitted content and
   * contexts, never for content a plugin handed back.
   */
  readonly admitted?: boolean
}

/** The batch `agent/pre-step` decides on, and the inbox items it would consume. */
export interface Proposal {
  readonly entries: readonly ProposedEntry[]
  readonly steering: readonly AgentMessage[]
}

/** How a step went, for the turn to decide what comes next. */
export type StepOutcome =
  | { kind: 'rejected' }
  | { kind: 'done'; hadToolCalls: boolean; wroteSteering: boolean }
  | { kind: 'failed'; error: unknown; failure: LlmFailure }

/**
 * The open step. `defersInjections` is true from `step/start` until the
 * steering checkpoint is written: an `inject()` in that window waits in
 * `deferred` for the end of the batch (and of the checkpoint), so the history
 * never shows the model a message it had not seen when it answered, and never
 * splits a steering item from its context (see `injections.ts`).
 *
 * The `logged`, `anchored` and `ended` marks are set *before* the write they
 * record is attempted (the refused-write rule): a write the log refused is
 * never tried again, not even by the close of an interrupted step.
 */
export class StepState {
  // Declared and set in the constructor, not as class fields: V8 runs a class's field initializers
  // as a function of their own, one more call per step while the code is not optimized yet.
  declare readonly turn: number
  declare readonly step: number
  /**
   * `{ turn, step }`, frozen: the data of the step's `step/start` and of its `step/end`, one object for both (the
   * log keeps it once: the two events say the same thing).
   */
  declare readonly bounds: { readonly turn: number; readonly step: number }
  declare defersInjections: boolean
  /** The shared empty `NONE_PLACED` until an injection is deferred (`deferInjection`): no array per step. */
  declare deferred: PlacedMessage[]
  declare assembler: Assembler | undefined
  /** The seqs of the step's logged chunks, for its anchor (see `ChunkSeqs`). */
  declare readonly chunkSeqs: ChunkSeqs
  /** The log accepted `step/start`: the step exists in the log and must be closed there. */
  declare logged: boolean
  /** The anchor was written, or refused: in either case it is never written again. */
  declare anchored: boolean
  /** `step/end` was written, or refused: in either case it is never written again. */
  declare ended: boolean
  declare calls: readonly ToolCallBlock[]
  /** The route that answers this step, once the call is prepared. */
  declare source: ModelSource | undefined
  declare batch: ToolBatch | undefined
  declare resultsDone: boolean
  declare wroteSteering: boolean

  constructor(turn: number, step: number) {
    this.turn = turn
    this.step = step
    // Frozen now (numbers only): the log has nothing to walk when it logs it.
    this.bounds = Object.freeze({ turn, step })
    this.defersInjections = true
    this.deferred = NONE_PLACED
    this.assembler = undefined
    this.chunkSeqs = new ChunkSeqs()
    this.logged = false
    this.anchored = false
    this.ended = false
    this.calls = NO_CALLS
    this.source = undefined
    this.batch = undefined
    this.resultsDone = false
    this.wroteSteering = false
  }
}

const NO_CALLS: readonly ToolCallBlock[] = Object.freeze([])

/**
 * The shared empty lists a turn and a step start with, frozen: each is
 * replaced by a list of its own at its first entry (`addPlaced`, a retry), so
 * a turn that defers nothing makes no list for it.
 */
export const NONE_PLACED: PlacedMessage[] = Object.freeze([]) as unknown as PlacedMessage[]
const NO_FAILURES: LlmFailure[] = Object.freeze([]) as unknown as LlmFailure[]

/** `list` with `placed` added: `list` itself, or a new list when `list` is the shared empty one. */
export function addPlaced(list: PlacedMessage[], placed: PlacedMessage): PlacedMessage[] {
  if (list === NONE_PLACED) return [placed]
  list.push(placed)
  return list
}

/**
 * The open turn, from before its claim to just before its `turn/end` (the
 * span in which `cancel()`, `steer()` and `inject()` see an open turn).
 */
export class TurnState {
  // Declared and set in the constructor (see `StepState`).
  declare readonly trigger: TurnTrigger
  declare readonly holder: TurnHolder
  /** Assigned when `turn/start` is written. */
  declare turn: number
  /**
   * Until `turn/start` is written: the injections admitted meanwhile, appended right after it (see
   * `injections.ts`); the shared empty `NONE_PLACED` until one is.
   */
  declare early: PlacedMessage[] | undefined
  declare step: StepState | undefined
  /** The decided end, when the turn ends other than by cancel or failure. */
  declare end: TurnEndReason | undefined
  /** A terminal continuation stop: authoritative through close and flush. */
  declare terminal: string | undefined
  declare failure: { error: unknown; step: number | undefined } | undefined
  /** Consecutive provider failures of this turn (cleared by a success); the shared empty `NO_FAILURES` until one. */
  declare priorFailures: LlmFailure[]
  /** The step that was open when the agent failed, for `agent/error`. */
  declare failedStep: number | undefined

  constructor(trigger: TurnTrigger) {
    this.trigger = trigger
    this.holder = new TurnHolder()
    this.turn = 0
    this.early = NONE_PLACED
    this.step = undefined
    this.end = undefined
    this.terminal = undefined
    this.failure = undefined
    this.priorFailures = NO_FAILURES
    this.failedStep = undefined
  }

  /** The agent failed while this turn was open: it unwinds to its close, which ends it `error` and reports. */
  fail(error: Error): void {
    this.failedStep = this.step?.step
    this.holder.fail(error)
  }
}
