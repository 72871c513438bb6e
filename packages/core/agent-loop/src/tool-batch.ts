import type { Agent, AdditionalContext } from '@deepseek-ai/dsh-agent'
import { createToolResultMessage, type ToolCallBlock, type UserMessage } from '@deepseek-ai/dsh-llm'
import type { LogWriter } from './failure'

/** What one tool call produced, as `ctx.tools` resolves it. */
export interface CallOutcome {
  message: UserMessage
  error?: { code: string; message: string }
  contexts: readonly AdditionalContext[]
}

type Call = { id: ToolCallBlock['id']; name: string; arguments: string }

/** One call staged through `ctx.tools` (see `ToolRegistry.plan`). */
export interface BatchPlan {
  run(): Promise<void>
  finish(): Promise<CallOutcome>
}

/** The part of `ctx.tools` a batch needs. */
export interface BatchTools {
  plan(call: Call, options: { agent: Agent; signal: AbortSignal }): Promise<BatchPlan>
  isConcurrencySafe(call: Call, agent?: Agent): boolean
}

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
 */
export class ToolBatch {
  private readonly started: boolean[]
  private readonly outcomes: (CallOutcome | undefined)[]
  /** Bodies under way: the pool's occupancy. */
  private readonly bodies = new Set<Promise<void>>()
  /** The tail of the policy stages, in model order. */
  private policy: Promise<unknown> = Promise.resolve()
  /** The tail of the result stages, in model order: settles when every started call's result is logged. */
  private results: Promise<void> = Promise.resolve()
  private logged = 0
  /** How many calls have started. */
  private count = 0
  /** The refusal that broke the batch: nothing more is logged. */
  private broken: { error: unknown } | undefined

  constructor(
    private readonly calls: readonly ToolCallBlock[],
    private readonly log: LogWriter,
    private readonly tools: BatchTools,
    private readonly agent: Agent,
    private readonly turn: number,
    private readonly step: number,
    private readonly maxParallel: number,
    private readonly signal: AbortSignal,
  ) {
    this.started = calls.map(() => false)
    this.outcomes = calls.map(() => undefined)
  }

  /** Runs calls until all are settled or the signal aborts; then waits for the ones under way. */
  async run(): Promise<void> {
    try {
      await this.runAll()
    } finally {
      await this.drain()
    }
    if (this.broken) throw this.broken.error
  }

  private async runAll(): Promise<void> {
    for (let i = 0; i < this.calls.length; i++) {
      for (;;) {
        if (this.signal.aborted || this.broken) return this.drain()
        const safe = this.maxParallel > 1 && this.classify(this.calls[i]!)
        if (safe) {
          if (this.bodies.size < this.maxParallel) {
            this.start(i)
            break
          }
          // Wait for room, then classify again.
          await Promise.race(this.bodies)
          continue
        }
        // An exclusive call is a barrier: every earlier call has finished (its result logged)
        // before it starts, and it finishes before any later call starts.
        if (this.logged < this.count) {
          await this.drain()
          continue
        }
        this.start(i)
        await this.drain()
        break
      }
    }
    await this.drain()
  }

  /** Waits until every started call's result is logged (or, in a broken batch, every started call has settled). */
  async drain(): Promise<void> {
    let tail
    do {
      tail = this.results
      await tail
    } while (tail !== this.results)
  }

  /**
   * Every call that never started gets its `tool/call` and its result, given
   * up on through `ctx.tools` (so `tools/result` observers see it end), in
   * model order. Call after `run`/`drain` once the signal aborted.
   */
  async finishAborted(): Promise<void> {
    await this.drain()
    for (let i = 0; i < this.calls.length && !this.broken; i++) {
      if (this.started[i]) continue
      this.started[i] = true
      const call = this.calls[i]!
      if (!this.logCall(call)) return
      let outcome: CallOutcome
      try {
        outcome = await (await this.tools.plan(call, { agent: this.agent, signal: this.signal })).finish()
      } catch {
        outcome = abortedBeforeDispatch(call)
      }
      this.outcomes[i] = outcome
      this.count++
      this.logDue()
    }
  }

  /** Contexts the settled calls deferred, in model order. */
  contexts(): AdditionalContext[] {
    const out: AdditionalContext[] = []
    for (const outcome of this.outcomes) if (outcome) out.push(...outcome.contexts)
    return out
  }

  private classify(call: ToolCallBlock): boolean {
    try {
      return this.tools.isConcurrencySafe(call, this.agent)
    } catch {
      return false
    }
  }

  /** Starts call `index`: its policy after the previous call's, its body as soon as policy passed. */
  private start(index: number): void {
    const call = this.calls[index]!
    this.started[index] = true
    if (!this.logCall(call)) return
    this.count++
    const planned = this.policy.then(() => this.tools.plan(call, { agent: this.agent, signal: this.signal }))
    this.policy = planned.catch(() => undefined)
    const body: Promise<void> = planned.then(
      (plan) => plan.run(),
      () => undefined,
    )
    this.bodies.add(body)
    void body.then(() => this.bodies.delete(body))
    const previous = this.results
    this.results = Promise.all([previous, body])
      .then(() => planned)
      .then((plan) => plan.finish())
      .catch((error: unknown) => brokenPipeline(call, error))
      .then((outcome) => {
        this.outcomes[index] = outcome
        this.logDue()
      })
  }

  /** Logs a call's `tool/call`; false (and the batch broken) when the log refuses it. */
  private logCall(call: ToolCallBlock): boolean {
    try {
      this.log.append('tool/call', { turn: this.turn, step: this.step, callId: call.id, name: call.name, arguments: call.arguments })
      return true
    } catch (error) {
      this.broken ??= { error }
      return false
    }
  }

  /** Logs every result whose predecessors are all logged; stops for good at a refused one. */
  private logDue(): void {
    while (this.logged < this.calls.length && !this.broken) {
      const outcome = this.outcomes[this.logged]
      if (!outcome) return
      try {
        this.log.append('tool/result', {
          turn: this.turn,
          step: this.step,
          message: outcome.message,
          ...(outcome.error ? { error: outcome.error } : {}),
        })
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

/** `ctx.tools` never rejects by contract; if it does anyway, the call still gets a result. */
function brokenPipeline(call: ToolCallBlock, error: unknown): CallOutcome {
  const message = error instanceof Error ? error.message : String(error)
  return {
    message: createToolResultMessage({ callId: call.id, content: `Error: ${message}`, isError: true }),
    error: { code: 'TOOL_ERROR', message },
    contexts: [],
  }
}
