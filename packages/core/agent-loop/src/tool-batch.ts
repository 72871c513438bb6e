import type { Agent, AdditionalContext } from '@deepseek-ai/dsh-agent'
import { createToolResultMessage, type ToolCallBlock } from '@deepseek-ai/dsh-llm'
import { isTextResult } from '@deepseek-ai/dsh-tools'
import { CallRecord, ResultRecord } from './batch-records'
import type { BatchHolder, BatchStage, BatchTools, CallOutcome } from './batch-stage'
import type { BuiltLogWriter } from './failure'

const NO_CONTEXTS: readonly AdditionalContext[] = Object.freeze([])

export const ABORTED_BEFORE_DISPATCH_TEXT = 'Error: tool call aborted before dispatch'

/**
 * One step's tool calls (R-TOOL-3).
 *
 * Exclusive calls are barriers (every earlier call has finished before one
 * starts, and it finishes before a later call starts); concurrency-safe calls
 * run in a rolling pool of `maxParallel`, each reclassified just before it
 * starts. Only the bodies
 * overlap: calls start in model order (each logging its `tool/call` as it
 * starts), their policy stages (`tools/pre-execute`, approval, guards) run one
 * after another in model order, and their result stages (`tools/post-execute`,
 * `tools/result`) and `tool/result` entries follow model order too. Once the
 * signal aborts, no further call starts; running bodies drain and keep their
 * real results, and `finishAborted` gives every call that never started its
 * `tool/call` and an `ABORTED_BEFORE_DISPATCH` result, still in model order
 * (R-CAN-4).
 *
 * When the log refuses a `tool/call` or a `tool/result`, the batch is
 * *broken*: the later entries cannot follow in model order, so nothing more
 * is logged; calls under way still run to their end (the turn waits for
 * them), and `run` rejects with the refusal.
 *
 * Nothing is awaited that has nothing to wait for: the stages come from
 * `ctx.tools.stage`, which returns a promise only when a listener, a guard or
 * a body gave one, and the batch runs every stage it can in one synchronous
 * pass (`advance`), waiting only on the stages that returned a promise. A
 * step of calls that need no wait costs no promise at all; the order rules
 * above are the same either way (see
 * .agents/notes/implemented/architecture/2026-12-02-perf-tool-stages.md).
 */
export class ToolBatch {
  // The fields are `declare`d and set in the constructor: class fields (even without an initializer) make V8 run
  // the class's field initializers as a function of their own, one more call per tool step in unoptimized code.
  private declare readonly calls: readonly ToolCallBlock[]
  private declare readonly log: BuiltLogWriter
  private declare readonly tools: BatchTools
  private declare readonly turn: number
  private declare readonly step: number
  private declare readonly maxParallel: number
  private declare readonly holder: BatchHolder
  private declare readonly stages: (BatchStage | undefined)[]
  /** Whether each started call's body has settled (or will never run). */
  private declare readonly bodyDone: boolean[]
  private declare readonly outcomes: (CallOutcome | undefined)[]
  /** How many calls have started (their `tool/call` logged): calls start in model order, so `[0, next)`. */
  private declare next: number
  /** The next started call whose policy stage has not begun; policy stages run one at a time, in model order. */
  private declare policyAt: number
  private declare policyWaiting: boolean
  /** The next call whose result stage has not ended; result stages run one at a time, in model order. */
  private declare finishAt: number
  private declare finishWaiting: boolean
  /** Started calls whose body has not settled: the pool's occupancy. */
  private declare running: number
  /** An exclusive call started: no call starts until every started call's result is logged. */
  private declare barrier: boolean
  private declare logged: number
  /** The refusal that broke the batch: nothing more is logged. */
  private declare broken: { error: unknown } | undefined
  private declare advancing: boolean
  private declare again: boolean
  /** Settles when a stage that was waiting ends (see `progress`). */
  private declare progressed: Promise<void> | undefined
  private declare wake: (() => void) | undefined
  /** What every call of the batch is staged with (one object for the batch). */
  private declare readonly stageOptions: { readonly agent: Agent; readonly signal: AbortSignal }

  constructor(
    calls: readonly ToolCallBlock[],
    log: BuiltLogWriter,
    tools: BatchTools,
    agent: Agent,
    turn: number,
    step: number,
    maxParallel: number,
    holder: BatchHolder,
  ) {
    this.calls = calls
    this.log = log
    this.tools = tools
    this.turn = turn
    this.step = step
    this.maxParallel = maxParallel
    this.holder = holder
    const n = calls.length
    this.stages = new Array<BatchStage | undefined>(n).fill(undefined)
    this.bodyDone = new Array<boolean>(n).fill(false)
    this.outcomes = new Array<CallOutcome | undefined>(n).fill(undefined)
    this.next = 0
    this.policyAt = 0
    this.policyWaiting = false
    this.finishAt = 0
    this.finishWaiting = false
    this.running = 0
    this.barrier = false
    this.logged = 0
    this.broken = undefined
    this.advancing = false
    this.again = false
    this.progressed = undefined
    this.wake = undefined
    this.stageOptions = { agent, signal: holder.signal }
  }

  /**
   * Runs calls until all are settled or the signal aborts, then waits for the
   * ones under way. `undefined` when everything ended synchronously (every
   * stage of every call had nothing to wait for); else a promise. Throws (or
   * rejects with) the refusal of a broken batch.
   */
  run(): Promise<void> | undefined {
    if (!this.settled()) return this.runAsync()
    if (this.broken) throw this.broken.error
    return undefined
  }

  private async runAsync(): Promise<void> {
    while (!this.settled()) await this.progress()
    if (this.broken) throw this.broken.error
  }

  /** Starts what may start and advances every stage that can; true once no call will start and every started call has its result. */
  private settled(): boolean {
    const startedAll = this.startCalls()
    this.advance()
    return startedAll && this.finishAt === this.next
  }

  /** Waits until every started call's result stage ended (its result logged, unless the batch is broken). */
  async drain(): Promise<void> {
    this.advance()
    while (this.finishAt < this.next) await this.progress()
  }

  /**
   * Every call that never started gets its `tool/call` and its result, given
   * up on through `ctx.tools` (so `tools/result` observers see it end), in
   * model order. Call after `run`/`drain` once the signal aborted.
   */
  async finishAborted(): Promise<void> {
    await this.drain()
    for (let i = this.next; i < this.calls.length && !this.broken; i++) {
      const call = this.calls[i]!
      if (!this.logCall(call)) return
      this.next = i + 1
      let outcome: CallOutcome
      try {
        const stage = this.tools.stage(call, this.stageOptions)
        const admitted = stage.admit()
        if (admitted) await admitted
        outcome = await stage.finish()
      } catch {
        outcome = abortedBeforeDispatch(call)
      }
      this.policyAt = this.finishAt = i + 1
      this.bodyDone[i] = true
      this.outcomes[i] = outcome
      this.logDue()
    }
  }

  /** Contexts the settled calls deferred, in model order (the shared empty list when none did: the usual case). */
  contexts(): readonly AdditionalContext[] {
    const { outcomes } = this
    let out: AdditionalContext[] | undefined
    for (let i = 0; i < outcomes.length; i++) {
      const contexts = outcomes[i]?.contexts
      if (!contexts || contexts.length === 0) continue
      out ??= []
      for (let j = 0; j < contexts.length; j++) out.push(contexts[j]!)
    }
    return out ?? NO_CONTEXTS
  }

  /**
   * Starts calls in model order while the rules allow (R-TOOL-3): a safe call
   * when the pool has room, classified just before it starts; an exclusive
   * call once every started call's result is logged, and nothing after it
   * until its own is. False when it must wait for a stage under way.
   */
  private startCalls(): boolean {
    while (this.next < this.calls.length) {
      // The holder's flag, which always agrees with its signal's `aborted` (a getter that checks its receiver).
      if (this.holder.aborted || this.broken) return true
      if (this.barrier) {
        // The exclusive call just started finishes (its result logged) before any later call starts.
        if (!this.allLogged()) return this.broken !== undefined
        this.barrier = false
        continue
      }
      if (this.isSafe(this.next)) {
        if (this.running < this.maxParallel) {
          this.start()
          continue
        }
        // Wait for room, then classify again.
        this.advance()
        if (this.running >= this.maxParallel) return false
        continue
      }
      // An exclusive call is a barrier: every earlier call has finished (its result logged) before it starts.
      if (!this.allLogged()) return this.broken !== undefined
      this.start()
      this.barrier = true
    }
    return true
  }

  /** Whether every started call's result is logged, after advancing what can advance now. */
  private allLogged(): boolean {
    if (this.logged < this.next) this.advance()
    return this.logged >= this.next
  }

  /** Whether call `index` may join the pool, decided now; its stage (made here) keeps the arguments it parsed for its policy stage. */
  private isSafe(index: number): boolean {
    if (this.maxParallel <= 1) return false
    try {
      return this.stageAt(index).isConcurrencySafe()
    } catch {
      return false
    }
  }

  /** Starts the next call: logs its `tool/call`; its stages run in `advance`. */
  private start(): void {
    if (!this.logCall(this.calls[this.next]!)) return
    this.next++
    this.running++
  }

  /**
   * Runs every stage that may run now, in model order: policy stages one at a
   * time (a body starts as soon as its policy passed), then result stages one
   * at a time once their body settled. A stage that returns a promise holds
   * its queue until it settles, and then advances again.
   */
  private advance(): void {
    if (this.advancing) {
      this.again = true
      return
    }
    this.advancing = true
    try {
      do {
        this.again = false
        this.admitDue()
        this.finishDue()
      } while (this.again)
    } finally {
      this.advancing = false
    }
    const wake = this.wake
    if (wake) {
      this.wake = this.progressed = undefined
      wake()
    }
  }

  private progress(): Promise<void> {
    return (this.progressed ??= new Promise<void>((resolve) => {
      this.wake = resolve
    }))
  }

  private admitDue(): void {
    while (!this.policyWaiting && this.policyAt < this.next) {
      const index = this.policyAt
      const stage = this.stageAt(index)
      const admitted = stage.admit()
      if (admitted) {
        this.policyWaiting = true
        const done = this.afterPolicy(index, stage)
        admitted.then(done, done)
        return
      }
      this.policyAt++
      this.runBody(index, stage)
    }
  }

  private runBody(index: number, stage: BatchStage): void {
    let ran: Promise<void> | undefined
    try {
      ran = stage.run()
    } catch {
      // `ctx.tools` never throws here by contract; the call's result stage still gives it a result.
    }
    if (!ran) {
      this.bodyDone[index] = true
      this.running--
      return
    }
    const settled = this.afterBody(index)
    ran.then(settled, settled)
  }

  // The two continuations below are returned unnamed: tsx's `keepNames` wraps each closure bound to a name in a
  // `defineProperty` call (about 300 ns), and these are made per call whose stage waited.

  /** What runs once the policy stage of call `index` that waited has ended: its body starts, and the batch advances. */
  private afterPolicy(index: number, stage: BatchStage): () => void {
    return () => {
      this.policyWaiting = false
      this.policyAt++
      this.runBody(index, stage)
      this.advance()
    }
  }

  /** What runs once the body of call `index` that returned a promise has settled. */
  private afterBody(index: number): () => void {
    return () => {
      this.bodyDone[index] = true
      this.running--
      this.advance()
    }
  }

  private finishDue(): void {
    while (!this.finishWaiting && this.finishAt < this.policyAt && this.bodyDone[this.finishAt]) {
      const index = this.finishAt
      const call = this.calls[index]!
      let result: CallOutcome | Promise<CallOutcome>
      try {
        result = this.stages[index]!.finish()
      } catch (error) {
        result = brokenPipeline(call, error)
      }
      if (result instanceof Promise) {
        this.finishWaiting = true
        this.finishLater(index, call, result)
        return
      }
      this.finishAt++
      this.outcomes[index] = result
      this.logDue()
    }
  }

  /**
   * Waits for a result stage that returned a promise. A method of its own: closures in `finishDue`'s loop would
   * make V8 allocate a context for every pass of the loop (they capture its per-call constants), waiting or not.
   */
  private finishLater(index: number, call: ToolCallBlock, result: Promise<CallOutcome>): void {
    result.then(
      (outcome) => this.finished(index, outcome),
      (error: unknown) => this.finished(index, brokenPipeline(call, error)),
    )
  }

  private finished(index: number, outcome: CallOutcome): void {
    this.finishWaiting = false
    this.finishAt++
    this.outcomes[index] = outcome
    this.logDue()
    this.advance()
  }

  /** The stage of call `index`, made through `ctx.tools` when first needed; a stand-in that answers with the failure if that throws. */
  private stageAt(index: number): BatchStage {
    let stage = this.stages[index]
    if (stage) return stage
    const call = this.calls[index]!
    try {
      stage = this.tools.stage(call, this.stageOptions)
    } catch (error) {
      stage = standIn(call, error)
    }
    this.stages[index] = stage
    return stage
  }

  /**
   * Logs a call's `tool/call`; false (and the batch broken) when the log refuses it. Built (`appendBuilt`): its
   * data are the loop's step numbers and the strings of the admitted anchor's frozen tool-call block.
   */
  private logCall(call: ToolCallBlock): boolean {
    try {
      this.log.appendBuilt('tool/call', new CallRecord(this.turn, this.step, call))
      return true
    } catch (error) {
      this.broken ??= { error }
      return false
    }
  }

  /**
   * Logs every result whose predecessors are all logged; stops for good at a refused one. A result that
   * dsh-tools built from the call's id and one string (`isTextResult`: its message is deep-frozen lossless JSON of
   * a tool result's shape) is appended built, like `tool/call`; any other result gets every check of `append`.
   */
  private logDue(): void {
    while (this.logged < this.calls.length && !this.broken) {
      const index = this.logged
      const outcome = this.outcomes[index]
      if (!outcome) return
      try {
        // A failed call's data stays a literal (rare); the others are records without an allocation site (batch-records.ts).
        const error = outcome.error
        if (error) this.log.append('tool/result', { turn: this.turn, step: this.step, message: outcome.message, error })
        else if (isTextResult(this.stages[index], outcome)) this.log.appendBuilt('tool/result', new ResultRecord(this.turn, this.step, outcome.message))
        else this.log.append('tool/result', new ResultRecord(this.turn, this.step, outcome.message))
      } catch (error) {
        this.broken = { error }
        return
      }
      this.logged++
    }
  }
}

function abortedBeforeDispatch(call: ToolCallBlock): CallOutcome {
  return {
    message: createToolResultMessage({ callId: call.id, content: ABORTED_BEFORE_DISPATCH_TEXT, isError: true }),
    error: { code: 'ABORTED_BEFORE_DISPATCH', message: 'tool call aborted before dispatch' },
    contexts: [],
  }
}

/** The stage of a call `ctx.tools` could not stage (out of `stageAt`: its closures would cost a context per call). */
function standIn(call: ToolCallBlock, error: unknown): BatchStage {
  return { isConcurrencySafe: () => false, admit: () => undefined, run: () => undefined, finish: () => brokenPipeline(call, error) }
}

/** `ctx.tools` never rejects by contract; if it does anyway, the call still gets a result. */
function brokenPipeline(call: ToolCallBlock, error: unknown): CallOutcome {
  const message = error instanceof Error ? error.message : String(error)
  return {
    message: createToolResultMessage({ callId: call.id, content: `Error: ${message}`, isError: true }),
    error: { code: 'TOOL_ERROR', message },
    contexts: [],
  }
}
