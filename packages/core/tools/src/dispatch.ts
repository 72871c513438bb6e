import { contentProblem, deepFreeze, type ContentBlock } from '@deepseek-ai/dsh-llm'
import type { ContextRecord } from '@deepseek-ai/dsh-session'
import { heard, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import { LinkedAbort, abortedBeforeDispatch, isTimeout } from './cancellation'
import { ToolError, isToolError } from './errors'
import { messageOf } from './results'
import type { DeferredContext, ToolDispatch, ToolInvocation, ToolOutput, ToolRunContext } from './types'

/**
 * The body's side of one call: its run context and the contexts it deferred.
 * `deferContext` works while the body runs; once the body settles (or times
 * out) the run is closed and late calls throw `CALL_SETTLED`.
 */
export class CallRun {
  readonly contexts: ContextRecord[] = []
  started = false
  private closed = false

  close(): void {
    this.closed = true
  }

  /** The body's run context; `signal` may be a function, called when the body first reads it. */
  context(invocation: ToolInvocation, signal: AbortSignal | (() => AbortSignal)): ToolRunContext {
    const defer = (context: DeferredContext) => this.defer(context)
    if (typeof signal !== 'function') {
      return Object.freeze({ callId: invocation.call.id, name: invocation.call.name, agent: invocation.agent, signal, deferContext: defer })
    }
    return Object.freeze({
      callId: invocation.call.id,
      name: invocation.call.name,
      agent: invocation.agent,
      get signal() {
        return signal()
      },
      deferContext: defer,
    })
  }

  private defer(context: DeferredContext): void {
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
    this.contexts.push(deepFreeze({ label: context.label, content: structuredClone(content) }))
  }
}

/**
 * Runs the `tools/execute` waterfall around the body and returns the body's
 * output, or throws a `ToolError` carrying the result code.
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
export async function dispatchCall(
  events: RawEvents,
  filter: SubjectFilter,
  invocation: ToolInvocation,
  run: CallRun,
  timeoutMs: number | undefined,
): Promise<ToolOutput> {
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
  let timedOut: (() => unknown) | undefined
  let body: Promise<ToolOutput> | undefined
  const inner = (): Promise<ToolOutput> => {
    const started = startBody(invocation, run, caller, replacement, timeoutMs)
    timedOut = started.timedOut
    body = started.output
    // Handled here so a wrapper that does not await next() leaves no unhandled rejection; awaited below.
    body.catch(() => {})
    return body
  }
  try {
    if (heard(events, 'tools/execute')) await events.waterfall(filter, 'tools/execute', dispatch, inner)
    // Unwrapped, the body is the only thing to wait for: awaited once, below.
    else inner()
  } catch (error) {
    throw runFailure(error, caller, timedOut?.(), run.started)
  }
  if (!body) {
    if (caller.aborted) throw abortedBeforeDispatch()
    throw new ToolError('TOOL_ERROR', 'the tool did not run: a tools/execute listener returned without calling next()')
  }
  try {
    return await body
  } catch (error) {
    throw runFailure(error, caller, timedOut?.(), run.started)
  }
}

/**
 * Starts the body. Its signal aborts with the caller's, the wrapper's
 * replacement, and the deadline; it is built only when the body first reads
 * `run.signal` (a body that never looks costs no signal), and it is the
 * caller's own when there is neither a deadline nor a replacement.
 * `timedOut()` gives the timeout reason once the deadline passed or the
 * replacement aborted with one.
 */
function startBody(
  invocation: ToolInvocation,
  run: CallRun,
  caller: AbortSignal,
  replacement: AbortSignal,
  timeoutMs: number | undefined,
): { timedOut: () => unknown; output: Promise<ToolOutput> } {
  const deadline = timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : undefined
  let expired: ToolError | undefined
  const timedOut = () => expired ?? (replacement.aborted && isTimeout(replacement.reason) ? replacement.reason : undefined)
  if (caller.aborted || replacement.aborted) {
    run.close()
    const reason = caller.aborted ? undefined : timedOut()
    return { timedOut, output: Promise.reject(reason !== undefined ? timeoutError(reason) : abortedBeforeDispatch()) }
  }
  let link: LinkedAbort | undefined
  const signal =
    deadline === undefined && replacement === caller
      ? caller
      : () => {
          if (!link) {
            link = new LinkedAbort(replacement === caller ? [caller] : [caller, replacement])
            if (expired) link.abort(expired)
          }
          return link.signal
        }
  let timer: ReturnType<typeof setTimeout> | undefined
  const release = () => {
    clearTimeout(timer)
    link?.dispose()
    run.close()
  }
  run.started = true
  let output: Promise<ToolOutput>
  try {
    output = Promise.resolve(invocation.tool.execute(invocation.args, run.context(invocation, signal)))
  } catch (error) {
    output = Promise.reject(error)
  }
  if (deadline === undefined) return { timedOut, output: output.finally(release) }
  // One promise settled by whichever comes first, the body or the deadline (cheaper than a race of two).
  return {
    timedOut,
    output: new Promise<ToolOutput>((resolve, reject) => {
      timer = setTimeout(() => {
        expired = new ToolError('TIMEOUT', `tool timed out after ${deadline} ms`)
        link?.abort(expired)
        release()
        reject(expired)
      }, deadline)
      output.then(
        (value) => {
          release()
          resolve(value)
        },
        (error: unknown) => {
          release()
          reject(error)
        },
      )
    }),
  }
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
