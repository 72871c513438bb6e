import type { CallId } from '@deepseek-ai/dsh-llm'
import { heard } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { parseArguments } from './arguments'
import { abortedBeforeDispatch } from './cancellation'
import { CallRun, dispatchCall } from './dispatch'
import { ToolError, isToolError } from './errors'
import type { PipelineHost } from './pipeline-host'
import { admit, review, runGuards } from './policy'
import { checkOutput, contentOf, errorResult, messageOf, successResult } from './results'
import type { ToolCall, ToolCallResult, ToolDefinition, ToolInvocation, ToolOutput } from './types'

/** The signal of a call staged without one. */
export const neverAborted: AbortSignal = new AbortController().signal

/**
 * One call staged through the pipeline, so that a caller running several
 * calls can keep everything but the bodies in model order (R-TOOL-3): the
 * policy stage is over when the plan resolves; `run()` runs the body;
 * `finish()` reviews and finalizes the output and emits `tools/result`.
 */
export interface ToolCallPlan {
  /**
   * Runs the body inside `tools/execute`, and resolves once it settled (never
   * rejects). Does nothing for a call that policy refused, or when called
   * again. A call whose signal aborted before this runs never starts.
   */
  run(): Promise<void>
  /**
   * `tools/post-execute` → `finalizeContent` → `tools/result`, and the
   * result. Never rejects (R-TOOL-2). A call whose body never ran gets
   * `ABORTED_BEFORE_DISPATCH`. Call once, after `run()` settled (or instead
   * of it, to give up on the call).
   */
  finish(): Promise<ToolCallResult>
}

/**
 * The same three stages as `ToolCallPlan`, for a caller that drives many
 * calls and should not pay a promise for a stage that had nothing to wait
 * for: each method returns `undefined` (or the result itself) when its stage
 * ended synchronously (no listener to wait for, guards that answered at once,
 * a body that returned a value), and a promise only when something had to be
 * awaited. Order of use: `admit()`; once it is over, `run()`; once that is
 * over, `finish()` (or `finish()` right after `admit()`, to give up on the
 * call). None of them throws or rejects (R-TOOL-2). Decisions, order and
 * result codes are exactly `ToolCallPlan`'s.
 */
export interface ToolCallStage {
  /**
   * `ctx.tools.isConcurrencySafe` for this call, decided now (ask just before
   * the call starts). The arguments it parsed and validated are the ones
   * `admit()` hands on, unless the tool's registration changed in between.
   */
  isConcurrencySafe(): boolean
  /** The policy stage: lookup, arguments, `tools/pre-execute` (and approval), guards. */
  admit(): Promise<void> | undefined
  /** The body inside `tools/execute`; nothing for a refused call, or when called again. */
  run(): Promise<void> | undefined
  /** `tools/post-execute` → `finalizeContent` → `tools/result`, and the result. Call once. */
  finish(): ToolCallResult | Promise<ToolCallResult>
}

/**
 * Stages one call (R-TOOL-1): lookup → arguments → `tools/pre-execute` (→
 * approval) → guards in `admit()`, the body (inside `tools/execute`) in
 * `run()`, and `tools/post-execute` → `finalizeContent` → `tools/result` in
 * `finish()`. Every failure becomes an error result with a code; nothing here
 * throws or rejects (R-TOOL-2). A class (not closures) so that a call costs
 * one object.
 */
export class StagedCall implements ToolCallStage {
  // The fields are `declare`d and set in the constructor: class fields (even without an initializer) make V8 run
  // the class's field initializers as a function of their own, one more call per tool call in unoptimized code.
  private declare readonly host: PipelineHost
  private declare readonly call: ToolCall
  private declare readonly agent: Agent
  private declare readonly signal: AbortSignal
  private declare readonly callRun: CallRun
  private declare readonly callId: CallId
  /** The call as policy, guards and the body see it, once the policy stage admitted it. */
  private declare invocation: ToolInvocation | undefined
  private declare failure: { error: unknown } | undefined
  private declare output: ToolOutput | undefined
  private declare ran: boolean
  /** The definition last looked up for the call's name, and the registry's version then. */
  private declare lookedUp: ToolDefinition | undefined
  private declare lookedUpAt: number
  /** The arguments as `parsedBy` parsed and validated them (`isConcurrencySafe` then `admit`: one parse). */
  private declare parsedBy: ToolDefinition | undefined
  private declare parsedArgs: unknown
  /** The result this call built from its id and one string (see `isTextResult`), once `finish()` made it. */
  private declare textResult: ToolCallResult | undefined

  constructor(host: PipelineHost, call: ToolCall, agent: Agent, signal: AbortSignal) {
    this.host = host
    this.call = call
    this.agent = agent
    this.signal = signal
    this.callRun = new CallRun()
    this.callId = String(call?.id) as CallId
    this.invocation = undefined
    this.failure = undefined
    this.output = undefined
    this.ran = false
    this.lookedUp = undefined
    this.lookedUpAt = -1
    this.parsedBy = undefined
    this.parsedArgs = undefined
    this.textResult = undefined
  }

  /**
   * Whether `result` is the one `stage` (a call staged by this package) built
   * from text (see `isTextResult`). A static method: it reads the stage's
   * private record, which no other object can carry.
   */
  static isTextResult(stage: unknown, result: unknown): boolean {
    return stage instanceof StagedCall && result !== undefined && stage.textResult === result
  }

  isConcurrencySafe(): boolean {
    const tool = this.definition()
    if (!tool || typeof tool.isConcurrencySafe !== 'function') return false
    try {
      return tool.isConcurrencySafe(this.argumentsFor(tool)) === true
    } catch {
      return false
    }
  }

  /** The definition the agent sees under the call's name now; looked up again only once a registration changed. */
  definition(): ToolDefinition | undefined {
    const { host } = this
    const version = host.version
    if (version === this.lookedUpAt) return this.lookedUp
    const { name } = this.call
    const tool = typeof name === 'string' ? host.definition(name, this.agent) : undefined
    this.lookedUp = tool
    this.lookedUpAt = version
    return tool
  }

  /** The call's arguments parsed and validated by `tool` (throws `INVALID_ARGUMENTS`); parsed again only for another definition. */
  argumentsFor(tool: ToolDefinition): unknown {
    if (this.parsedBy === tool) return this.parsedArgs
    const args = parseArguments(tool, this.call.arguments)
    this.parsedBy = tool
    this.parsedArgs = args
    return args
  }

  /**
   * The policy stage: lookup, arguments, `tools/pre-execute` (and approval),
   * guards; a refusal becomes the call's failure. Synchronous unless a
   * listener is heard or a guard answers with a promise. The subject filter
   * is looked up only when a listener is heard.
   */
  admit(): Promise<void> | undefined {
    const { host, signal } = this
    let invocation: ToolInvocation
    let pending: Promise<void> | undefined
    try {
      if (signal.aborted) throw abortedBeforeDispatch()
      const tool = this.definition()
      if (!tool) throw new ToolError('UNKNOWN_TOOL', `unknown tool ${JSON.stringify(String(this.call.name))}`)
      const args = this.argumentsFor(tool)
      const { call, agent } = this
      invocation = Object.freeze({
        call: Object.freeze({ id: call.id, name: call.name, arguments: call.arguments }),
        tool,
        args,
        agent,
        signal,
      })
      // With no tools/pre-execute listener the decision is `allow`: no async frame and no await for it.
      pending = heard(host.events, 'tools/pre-execute') ? admitHeard(host, invocation) : runGuards(host.guards(agent), 0, invocation)
    } catch (error) {
      this.failure = { error }
      return undefined
    }
    if (pending === undefined) {
      this.invocation = invocation
      return undefined
    }
    return this.admitted(pending, invocation)
  }

  run(): Promise<void> | undefined {
    const { invocation } = this
    if (this.ran || this.failure || !invocation) return undefined
    this.ran = true
    const { host } = this
    const { tool } = invocation
    let output: ToolOutput | Promise<ToolOutput>
    try {
      if (this.signal.aborted) throw abortedBeforeDispatch()
      output = dispatchCall(host.events, host, invocation, this.callRun, tool.timeoutMs ?? (host.defaultTimeoutMs || undefined))
    } catch (error) {
      this.failure = { error }
      return undefined
    }
    if (typeof output === 'string') {
      // A string needs no check (checkOutput's first test).
      this.output = output
      return undefined
    }
    if (!(output instanceof Promise)) {
      this.accept(output)
      return undefined
    }
    return this.ranLater(output)
  }

  finish(): ToolCallResult | Promise<ToolCallResult> {
    let result: ToolCallResult | Promise<ToolCallResult>
    try {
      if (this.failure) throw this.failure.error
      if (!this.ran || !this.invocation) throw abortedBeforeDispatch()
      const { host, invocation } = this
      // With no tools/post-execute listener the decision is `accept`: the body's output as is, without an await.
      result = heard(host.events, 'tools/post-execute') ? this.reviewed(invocation) : this.finalized(invocation, this.output!)
    } catch (error) {
      result = failed(this.callId, error, this.callRun)
    }
    if (!(result instanceof Promise)) return this.done(result)
    return this.finishedLater(result)
  }

  // The continuations of stages that waited live in methods of their own: a closure in `admit`, `run` or `finish`
  // would make V8 allocate a context for every call of them, waiting or not.

  private admitted(pending: Promise<void>, invocation: ToolInvocation): Promise<void> {
    return pending.then(
      () => {
        this.invocation = invocation
      },
      (error: unknown) => {
        this.failure = { error }
      },
    )
  }

  private ranLater(output: Promise<ToolOutput>): Promise<void> {
    return output.then(
      (value) => this.accept(value),
      (error: unknown) => {
        this.failure = { error }
      },
    )
  }

  /** `tools/post-execute`, then `finalizeContent`. */
  private reviewed(invocation: ToolInvocation): Promise<ToolCallResult> {
    const { host } = this
    return review(host, host.filter(invocation.agent), invocation, this.output!).then((output) => this.finalized(invocation, output))
  }

  /**
   * `finalize`; the result of a string output of a tool without
   * `finalizeContent` (one text block) is recorded as built from text when the
   * call's id is a non-empty string (so its message is lossless JSON of a tool
   * result's shape, see `isTextResult`).
   */
  private finalized(invocation: ToolInvocation, output: ToolOutput): ToolCallResult {
    const result = finalize(invocation, this.callRun, output, this.signal)
    const { id } = invocation.call
    if (typeof output === 'string' && !invocation.tool.finalizeContent && typeof id === 'string' && id.length !== 0) this.textResult = result
    return result
  }

  private finishedLater(result: Promise<ToolCallResult>): Promise<ToolCallResult> {
    return result.then(
      (value) => this.done(value),
      (error: unknown) => this.done(failed(this.callId, error, this.callRun)),
    )
  }

  private accept(output: ToolOutput): void {
    try {
      this.output = checkOutput(output, 'the tool output')
    } catch (error) {
      this.failure = { error }
    }
  }

  /** Closes the run (late `deferContext` calls throw) and announces the result on `tools/result`. */
  private done(result: ToolCallResult): ToolCallResult {
    this.callRun.close()
    const { host } = this
    if (heard(host.events, 'tools/result')) announceResult(host, this.agent, this.call, result)
    return result
  }
}

/** `tools/result`, listener failures contained (a function of its own: its closure would cost `done` a context per call). */
function announceResult(host: PipelineHost, agent: Agent, call: ToolCall, result: ToolCallResult): void {
  try {
    host.emitter.emit(host.filter(agent), 'tools/result', [agent, call, result], (error) => host.reportListenerError('tools/result', error))
  } catch (error) {
    host.reportListenerError('tools/result', error)
  }
}

/**
 * Whether `result` is what `stage`, a call staged by this package
 * (`ctx.tools.stage`), returned from `finish()` after building it from the
 * call's id and one string (a body's or a `tools/post-execute` listener's
 * string output, with no `finalizeContent`): its message is then a tool result
 * made by `createToolResultMessage` from strings only, so it is deep-frozen,
 * lossless JSON of a tool result's shape, and a driver may log it without
 * walking it again. False for anything else (blocks, an error result, a stage
 * or result of another implementation): such a result must be checked.
 * The class's static method itself (it uses no `this`): no call frame of its own.
 */
export const isTextResult: (stage: unknown, result: unknown) => boolean = StagedCall.isTextResult

/** Stages one call without running it (see `ToolCallStage`). */
export function stageCall(host: PipelineHost, call: ToolCall, options: { agent: Agent; signal?: AbortSignal }): ToolCallStage {
  return new StagedCall(host, call, options.agent, options.signal ?? neverAborted)
}

/** `stageCall` with the policy stage awaited and promise-returning stages (the public `ToolCallPlan`). */
export async function planCall(host: PipelineHost, call: ToolCall, options: { agent: Agent; signal?: AbortSignal }): Promise<ToolCallPlan> {
  const stage = stageCall(host, call, options)
  await stage.admit()
  return {
    async run() {
      await stage.run()
    },
    async finish() {
      return stage.finish()
    },
  }
}

/** One call through the whole pipeline: policy, then its body, then its result. Never rejects. */
export async function executeCall(host: PipelineHost, call: ToolCall, options: { agent: Agent; signal?: AbortSignal }): Promise<ToolCallResult> {
  const stage = stageCall(host, call, options)
  const admitted = stage.admit()
  if (admitted) await admitted
  const ran = stage.run()
  if (ran) await ran
  return stage.finish()
}

/** The error result of a failed stage. */
function failed(callId: CallId, error: unknown, run: CallRun): ToolCallResult {
  if (isToolError(error)) {
    // A blocked result withholds what the body deferred too: it may repeat the withheld output.
    return errorResult(callId, error.code, error.message, error.code === 'BLOCKED' ? [] : run.contexts)
  }
  return errorResult(callId, 'TOOL_ERROR', messageOf(error, 'tool failed'), run.contexts)
}

/** The policy stage's waits when a `tools/pre-execute` listener is heard: the listeners (and approval), then the guards. */
async function admitHeard(host: PipelineHost, invocation: ToolInvocation): Promise<void> {
  await admit(host, host.filter(invocation.agent), invocation)
  const guarded = runGuards(host.guards(invocation.agent), 0, invocation)
  if (guarded) await guarded
}

/** `finalizeContent` (or the output as content) and the success result. */
function finalize(invocation: ToolInvocation, run: CallRun, output: ToolOutput, signal: AbortSignal): ToolCallResult {
  const { tool } = invocation
  let content
  try {
    if (tool.finalizeContent) content = contentOf(tool.finalizeContent(output, run.context(invocation, signal)), 'finalizeContent()')
    // A string (checked when the body returned it) becomes its one text block in the message itself.
    else content = typeof output === 'string' ? output : contentOf(output, 'the tool output')
  } catch (error) {
    throw isToolError(error) ? error : new ToolError('TOOL_ERROR', messageOf(error, 'the tool could not format its result'), { cause: error })
  }
  return successResult(invocation.call.id, content, run.contexts)
}

