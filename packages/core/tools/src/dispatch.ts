import { contentProblem, deepFreeze, type ContentBlock } from '@deepseek-ai/dsh-llm'
import { jsonDataProblem, type ContextRecord } from '@deepseek-ai/dsh-session'
import { heard, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import { LinkedAbort, abortedBeforeDispatch, isTimeout } from './cancellation'
import { ToolError, isToolError } from './errors'
import { messageOf } from './results'
import type { DeferredContext, ToolDispatch, ToolInvocation, ToolOutput, ToolRunContext } from './types'

/**
 * The body's side of one call: its run context, the contexts it deferred,
 * and (once `start` runs) its signal and deadline. `deferContext` works while
 * the body runs; once the body settles (or times out) the run is closed and
 * late calls throw `CALL_SETTLED`.
 *
 * The body's signal aborts with the caller's, the wrapper's replacement, and
 * the deadline; it is built only when the body first reads `run.signal` (a
 * body that never looks costs no signal), and it is the caller's own when
 * there is neither a deadline nor a replacement. `timedOut()` gives the
 * timeout reason once the deadline passed or the replacement aborted with
 * one. One object per call: the run, its body and the body's signal source
 * (they were three objects; each is one more allocation and constructor call
 * in the cold round's interpreted code).
 */
/** The deferred contexts of a run that deferred none: one frozen empty list for every call. */
const NO_CONTEXTS: readonly ContextRecord[] = Object.freeze([])

export class CallRun {
  // Set in the constructor, not as class fields (see `StagedCall`): one run per tool call.
  /** What the body deferred, in order: the shared empty `NO_CONTEXTS` until its first `deferContext` (most calls defer nothing). */
  declare contexts: readonly ContextRecord[]
  declare started: boolean
  private declare closed: boolean
  /** `deferContext` bound to this run, made when a body first reads it. */
  private declare deferBound: ((context: DeferredContext) => void) | undefined
  private declare expired: ToolError | undefined
  private declare link: LinkedAbort | undefined
  private declare timer: ReturnType<typeof setTimeout> | undefined
  /** The caller's signal and the one `tools/execute` left in `dispatch.signal`; set when the body is about to start. */
  private declare caller: AbortSignal | undefined
  private declare replacement: AbortSignal | undefined

  constructor() {
    this.contexts = NO_CONTEXTS
    this.started = false
    this.closed = false
    this.deferBound = undefined
    this.expired = undefined
    this.link = undefined
    this.timer = undefined
    this.caller = undefined
    this.replacement = undefined
  }

  close(): void {
    this.closed = true
  }

  /**
   * The body's run context; `signal` may be a source whose `signal()` is
   * called when the body first reads it.
   */
  context(invocation: ToolInvocation, signal: AbortSignal | SignalSource): ToolRunContext {
    return new RunContext(this, invocation, signal)
  }

  /** `deferContext` of the run's contexts (see `ToolRunContext`). */
  defer(context: DeferredContext): void {
    if (this.closed) {
      throw new ToolError('CALL_SETTLED', 'deferContext() was called after the tool call finished; the context was dropped')
    }
    if (context === null || typeof context !== 'object' || typeof context.label !== 'string') {
      throw new ToolError('INVALID_CONTEXT', 'deferContext() needs { label: string, content: string | ContentBlock[] }')
    }
    const content: ContentBlock[] =
      typeof context.content === 'string' ? [{ type: 'text', text: context.content }] : (context.content as ContentBlock[])
    const problem = contentProblem(content, 'context.content')
    if (problem !== undefined) throw new ToolError('INVALID_CONTEXT', `deferContext(): ${problem}`)
    // What the session log would refuse (and stop the agent for) is refused here, to the body.
    const lossy = typeof context.content === 'string' ? undefined : jsonDataProblem(content, 'context.content')
    if (lossy !== undefined) throw new ToolError('INVALID_CONTEXT', `deferContext(): ${lossy}`)
    const record = deepFreeze({ label: context.label, content: structuredClone(content) })
    if (this.contexts === NO_CONTEXTS) this.contexts = [record]
    else (this.contexts as ContextRecord[]).push(record)
  }

  /** `defer` bound to this run (what `run.deferContext` gives, made once). */
  deferFunction(): (context: DeferredContext) => void {
    return (this.deferBound ??= this.defer.bind(this))
  }

  /** The timeout that ended the body (its deadline, or a replacement signal that aborted with one), if any. */
  timedOut(): unknown {
    if (this.expired) return this.expired
    const { replacement } = this
    return replacement !== undefined && replacement.aborted && isTimeout(replacement.reason) ? replacement.reason : undefined
  }

  /** The body's signal, linked on first read (the run is the `SignalSource` of a body with a deadline or a replacement). */
  signal(): AbortSignal {
    if (!this.link) {
      const caller = this.caller!
      const replacement = this.replacement!
      this.link = new LinkedAbort(replacement === caller ? [caller] : [caller, replacement])
      if (this.expired) this.link.abort(this.expired)
    }
    return this.link.signal
  }

  private release(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.link?.dispose()
    this.closed = true
  }

  /**
   * Starts the body with `caller`'s signal and `replacement` (the caller's
   * own when no wrapper replaced it): its output, or a promise of it when
   * the body returned one. Throws (or rejects with) what the body threw,
   * unclassified; a call whose signal already aborted throws before the body
   * starts. Called once per run.
   */
  start(invocation: ToolInvocation, caller: AbortSignal, replacement: AbortSignal, timeoutMs: number | undefined): ToolOutput | Promise<ToolOutput> {
    this.caller = caller
    this.replacement = replacement
    const deadline = timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : undefined
    if (caller.aborted || (replacement !== caller && replacement.aborted)) {
      this.closed = true
      const reason = caller.aborted ? undefined : this.timedOut()
      throw reason !== undefined ? timeoutError(reason) : abortedBeforeDispatch()
    }
    const signal = deadline === undefined && replacement === caller ? caller : this
    this.started = true
    let output: ToolOutput | PromiseLike<ToolOutput>
    try {
      output = invocation.tool.execute(invocation.args, new RunContext(this, invocation, signal))
    } catch (error) {
      this.release()
      throw error
    }
    if (!isThenable(output)) {
      // Settled before anything could interrupt it: no deadline to arm.
      this.release()
      return output
    }
    return this.await(output, deadline)
  }

  /** The wait for a body that returned a promise: until it settles, or its deadline passes first. */
  private await(pending: PromiseLike<ToolOutput>, deadline: number | undefined): Promise<ToolOutput> {
    if (deadline === undefined) {
      return Promise.resolve(pending).then(
        (value) => {
          this.release()
          return value
        },
        (error: unknown) => {
          this.release()
          throw error
        },
      )
    }
    // One promise settled by whichever comes first, the body or the deadline (cheaper than a race of two).
    return new Promise<ToolOutput>((resolve, reject) => {
      this.timer = setTimeout(() => {
        const expired = new ToolError('TIMEOUT', `tool timed out after ${deadline} ms`)
        this.expired = expired
        this.link?.abort(expired)
        this.release()
        reject(expired)
      }, deadline)
      pending.then(
        (value) => {
          this.release()
          resolve(value)
        },
        (error: unknown) => {
          this.release()
          reject(error)
        },
      )
    })
  }
}

/** What gives a body its signal when the body first reads it. */
interface SignalSource {
  signal(): AbortSignal
}

/**
 * A body's run context, frozen. A class rather than an object literal: V8
 * creates a literal that has a getter on a slow path (about 1.5 µs here,
 * every call), a class instance in about 50 ns. `callId`, `name` and `agent`
 * are its only own properties; `signal` and `deferContext` are the class's
 * getters, made on first read (a linked signal only for a body that reads it,
 * the bound `deferContext` only for one that defers, kept by the run), and
 * `deferContext` works detached (`const { deferContext } = run`). The run
 * and the signal source are private fields: a body cannot reach the call's
 * internals (`Reflect.ownKeys`, a spread or `util.inspect` show none). That
 * costs a field initializer per call (about 160 ns in interpreted code, a
 * tenth of a percent of a cold tool turn); symbol keys would save it and
 * expose the run. No closure is made per call (tsx names each one at run time).
 */
class RunContext implements ToolRunContext {
  declare readonly callId: ToolRunContext['callId']
  declare readonly name: string
  declare readonly agent: ToolRunContext['agent']
  readonly #run: CallRun
  readonly #signal: AbortSignal | SignalSource

  constructor(run: CallRun, invocation: ToolInvocation, signal: AbortSignal | SignalSource) {
    const { call } = invocation
    this.callId = call.id
    this.name = call.name
    this.agent = invocation.agent
    this.#run = run
    this.#signal = signal
    Object.freeze(this)
  }

  get signal(): AbortSignal {
    const signal = this.#signal
    return signal instanceof AbortSignal ? signal : signal.signal()
  }

  get deferContext(): (context: DeferredContext) => void {
    return this.#run.deferFunction()
  }
}

/** Where `dispatchCall` gets the subject filter of `tools/execute`, only when a listener is heard. */
export interface SubjectFilters {
  filter(agent: ToolInvocation['agent']): SubjectFilter
  /** Told of a wrapper that failed after the body had returned (the call keeps the body's result). */
  reportListenerError(event: string, error: unknown): void
}

/**
 * Runs the `tools/execute` waterfall around the body and returns the body's
 * output, or throws a `ToolError` carrying the result code.
 *
 * Synchronous when it can be: with no `tools/execute` listener and a body
 * that returns (or throws) without a promise, the output comes back (or the
 * error is thrown) directly, with no promise, no deadline timer and no
 * signal built, since nothing could have interrupted it. Otherwise a promise
 * of the same outcome.
 *
 * Signal rules: wrappers may replace `dispatch.signal`; the body gets
 * a signal that aborts with any of caller, replacement and deadline, so the
 * caller's abort always reaches it. A call whose signal is already aborted when the body
 * would start never starts (`ABORTED_BEFORE_DISPATCH`, or `TIMEOUT` when a
 * wrapper's timeout already elapsed).
 *
 * Abort rule (decided in .agents/notes/implemented/feature/2026-11-30-tool-abort-keeps-real-result.md):
 * after the body started, an abort of the caller's signal does not stop the
 * wait. The body is told through its signal and the call settles when the
 * body does: a body that returns anyway keeps its real result (the side
 * effect happened, the model must know), one that throws gets `ABORTED`. A
 * timeout is different: it is the tool's declared bound, so the call returns
 * `TIMEOUT` as soon as it elapses, without waiting for a body that ignores it.
 */
export function dispatchCall(
  events: RawEvents,
  filters: SubjectFilters,
  invocation: ToolInvocation,
  run: CallRun,
  timeoutMs: number | undefined,
): ToolOutput | Promise<ToolOutput> {
  if (heard(events, 'tools/execute')) return dispatchWrapped(events, filters, invocation, run, timeoutMs)
  // Unwrapped: no replacement signal, and the body is the only thing to wait for.
  const caller = invocation.signal
  let output: ToolOutput | Promise<ToolOutput>
  try {
    output = run.start(invocation, caller, caller, timeoutMs)
  } catch (error) {
    throw runFailure(error, caller, run.timedOut(), run.started)
  }
  if (!(output instanceof Promise)) return output
  return classified(output, caller, run)
}

/** A body's promise with its rejection classified (a function of its own: a closure in `dispatchCall` would cost a context per call). */
function classified(output: Promise<ToolOutput>, caller: AbortSignal, run: CallRun): Promise<ToolOutput> {
  return output.catch((error: unknown) => {
    throw runFailure(error, caller, run.timedOut(), run.started)
  })
}

/** `dispatchCall` with `tools/execute` listeners: the body runs inside their waterfall. */
async function dispatchWrapped(
  events: RawEvents,
  filters: SubjectFilters,
  invocation: ToolInvocation,
  run: CallRun,
  timeoutMs: number | undefined,
): Promise<ToolOutput> {
  const filter = filters.filter(invocation.agent)
  const caller = invocation.signal
  let replacement = caller
  const dispatch: ToolDispatch = {
    call: invocation.call,
    tool: invocation.tool,
    args: invocation.args,
    agent: invocation.agent,
    get signal() {
      return replacement
    },
    set signal(value: AbortSignal) {
      if (!(value instanceof AbortSignal)) throw new TypeError('tools/execute: dispatch.signal must be an AbortSignal')
      replacement = value
    },
  }
  let body: Promise<ToolOutput> | undefined
  /** The body's output once it returned: what the call reports even when a wrapper fails after that. */
  let returned: { output: ToolOutput } | undefined
  const inner = (): Promise<ToolOutput> => {
    try {
      body = Promise.resolve(run.start(invocation, caller, replacement, timeoutMs))
    } catch (error) {
      body = Promise.reject(error)
    }
    // Handled here so a wrapper that does not await next() leaves no unhandled rejection; awaited below.
    body.then(
      (output) => void (returned = { output }),
      () => {},
    )
    return body
  }
  try {
    await events.waterfall(filter, 'tools/execute', dispatch, inner)
  } catch (error) {
    // The body ran and returned before the wrapper failed (a metrics call after next(), a second next()):
    // its side effect happened, so the model gets its result, as for a body that outlived an abort.
    if (returned !== undefined && !run.timedOut()) {
      filters.reportListenerError('tools/execute', error)
      return returned.output
    }
    throw runFailure(error, caller, run.timedOut(), run.started)
  }
  if (!body) {
    if (caller.aborted) throw abortedBeforeDispatch()
    throw new ToolError('TOOL_ERROR', 'the tool did not run: a tools/execute listener returned without calling next()')
  }
  try {
    return await body
  } catch (error) {
    throw runFailure(error, caller, run.timedOut(), run.started)
  }
}

/** Whether `value` is a promise or another thenable (what `await` would wait for). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

function timeoutError(reason: unknown): ToolError {
  return isToolError(reason) && reason.code === 'TIMEOUT' ? reason : new ToolError('TIMEOUT', 'tool call timed out')
}

/** Classifies a failure of the dispatch stage into a `ToolError` with the result code. */
function runFailure(error: unknown, caller: AbortSignal, timedOut: unknown, started: boolean): ToolError {
  if (!started) {
    if (caller.aborted) return abortedBeforeDispatch()
    if (isToolError(error)) return error
    if (isTimeout(error)) return timeoutError(error)
    return new ToolError('TOOL_ERROR', messageOf(error, 'a tools/execute listener failed'), { cause: error })
  }
  if (caller.aborted) return new ToolError('ABORTED', 'tool call aborted', { cause: error })
  if (isToolError(error)) return error
  if (isTimeout(error) || timedOut !== undefined) return timeoutError(isTimeout(error) ? error : timedOut)
  return new ToolError('TOOL_ERROR', messageOf(error, 'tool failed'), { cause: error })
}
