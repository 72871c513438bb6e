import type { Agent, AdditionalContext } from '@deepseek-ai/dsh-agent'
import { createToolResultMessage, type ToolCallBlock, type UserMessage } from '@deepseek-ai/dsh-llm'
import type { Session } from '@deepseek-ai/dsh-session'

/** What one tool call produced, as `ctx.tools.execute` returns it. */
export interface CallOutcome {
  message: UserMessage
  error?: { code: string; message: string }
  contexts: readonly AdditionalContext[]
}

/** The part of `ctx.tools` a batch needs. */
export interface BatchTools {
  execute(call: { id: ToolCallBlock['id']; name: string; arguments: string }, options: { agent: Agent; signal: AbortSignal }): Promise<CallOutcome>
  isConcurrencySafe(call: { id: ToolCallBlock['id']; name: string; arguments: string }, agent?: Agent): boolean
}

export const ABORTED_BEFORE_DISPATCH_TEXT = 'Error: tool call aborted before dispatch'

type CallState = 'pending' | 'running' | 'settled'

/**
 * One step's tool calls (R-TOOL-3).
 *
 * Exclusive calls are barriers; concurrency-safe calls run in a rolling pool of
 * `maxParallel`, each reclassified just before it starts. Only the bodies
 * overlap: calls start in model order (each logging its `tool/call` as it
 * starts), and results are logged in model order, each as soon as every
 * earlier result is in. Once the signal aborts, no further call starts; the
 * running ones are drained and keep their real results, and `finishAborted`
 * gives every call that never started a synthetic `tool/call` +
 * `ABORTED_BEFORE_DISPATCH` result, still in model order (R-CAN-4).
 */
export class ToolBatch {
  private readonly states: CallState[]
  private readonly outcomes: (CallOutcome | undefined)[]
  private readonly running = new Set<Promise<void>>()
  private logged = 0

  constructor(
    private readonly calls: readonly ToolCallBlock[],
    private readonly session: Session,
    private readonly tools: BatchTools,
    private readonly agent: Agent,
    private readonly turn: number,
    private readonly step: number,
    private readonly maxParallel: number,
    private readonly signal: AbortSignal,
  ) {
    this.states = calls.map(() => 'pending')
    this.outcomes = calls.map(() => undefined)
  }

  /** Runs calls until all are settled or the signal aborts; then waits for the running ones. */
  async run(): Promise<void> {
    for (let i = 0; i < this.calls.length; i++) {
      for (;;) {
        if (this.signal.aborted) return this.drain()
        const safe = this.maxParallel > 1 && this.classify(this.calls[i]!)
        if (safe && this.running.size < this.maxParallel) {
          this.start(i)
          break
        }
        if (!safe && this.running.size === 0) {
          await this.start(i)
          break
        }
        // Wait for room (or, for an exclusive call, for the pool to empty), then classify again.
        await (safe ? Promise.race(this.running) : Promise.all(this.running))
      }
    }
    await this.drain()
  }

  /** Waits for every running call and logs the results that are due. */
  async drain(): Promise<void> {
    while (this.running.size) await Promise.all(this.running)
  }

  /** Synthetic entries for every call that never started; call after `run`/`drain` under an abort. */
  finishAborted(): void {
    for (let i = 0; i < this.calls.length; i++) {
      if (this.states[i] !== 'pending') continue
      const call = this.calls[i]!
      this.states[i] = 'settled'
      this.session.append('tool/call', { turn: this.turn, step: this.step, callId: call.id, name: call.name, arguments: call.arguments })
      this.outcomes[i] = {
        message: createToolResultMessage({ callId: call.id, content: ABORTED_BEFORE_DISPATCH_TEXT, isError: true }),
        error: { code: 'ABORTED_BEFORE_DISPATCH', message: 'tool call aborted before dispatch' },
        contexts: [],
      }
    }
    this.logDue()
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

  private start(index: number): Promise<void> {
    const call = this.calls[index]!
    this.states[index] = 'running'
    this.session.append('tool/call', { turn: this.turn, step: this.step, callId: call.id, name: call.name, arguments: call.arguments })
    const task = Promise.resolve()
      .then(() => this.tools.execute(call, { agent: this.agent, signal: this.signal }))
      .catch((error: unknown) => brokenPipeline(call, error))
      .then((outcome) => {
        this.states[index] = 'settled'
        this.outcomes[index] = outcome
        this.running.delete(task)
        this.logDue()
      })
    this.running.add(task)
    return task
  }

  /** Logs every result whose predecessors are all logged. */
  private logDue(): void {
    while (this.logged < this.calls.length) {
      const outcome = this.outcomes[this.logged]
      if (!outcome) return
      this.session.append('tool/result', {
        turn: this.turn,
        step: this.step,
        message: outcome.message,
        ...(outcome.error ? { error: outcome.error } : {}),
      })
      this.logged++
    }
  }
}

/** `ctx.tools.execute` never rejects by contract; if it does anyway, the call still gets a result. */
function brokenPipeline(call: ToolCallBlock, error: unknown): CallOutcome {
  const message = error instanceof Error ? error.message : String(error)
  return {
    message: createToolResultMessage({ callId: call.id, content: `Error: ${message}`, isError: true }),
    error: { code: 'TOOL_ERROR', message },
    contexts: [],
  }
}
