import type { CallId } from '@deepseek-ai/dsh-llm'
import { heard, type ContainedEmitter, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Context } from './cordis'
import { parseArguments } from './arguments'
import { approvalAnswer, type ApprovalRequest } from './approval'
import { abortedBeforeDispatch, beforeDispatch } from './cancellation'
import { CallRun, dispatchCall, isThenable } from './dispatch'
import { ToolError, isToolError } from './errors'
import { checkOutput, contentOf, errorResult, messageOf, successResult } from './results'
import type {
  PostExecuteDecision,
  PreExecuteDecision,
  ToolCall,
  ToolCallResult,
  ToolDefinition,
  ToolGuard,
  ToolGuardVerdict,
  ToolInvocation,
  ToolOutput,
} from './types'

/** What the pipeline needs from the registry that runs it. */
export interface PipelineHost {
  /** The registry's own context: `approval` is read through it. */
  readonly home: Context
  readonly events: RawEvents
  /** Emits `tools/result` with listener failures contained. */
  readonly emitter: ContainedEmitter
  filter(agent: Agent): SubjectFilter
  definition(name: string, agent: Agent): ToolDefinition | undefined
  guards(agent: Agent): readonly ToolGuard[]
  /** Changes whenever a registration changes: an unchanged version means `definition` would answer the same. */
  readonly version: number
  readonly defaultTimeoutMs: number
  reportListenerError(event: string, error: unknown): void
}

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' })
const ACCEPT: PostExecuteDecision = Object.freeze({ kind: 'accept' })
const neverAborted = new AbortController().signal

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
  private readonly callRun = new CallRun()
  private readonly callId: CallId
  /** The call as policy, guards and the body see it, once the policy stage admitted it. */
  private invocation: ToolInvocation | undefined
  private failure: { error: unknown } | undefined
  private output: ToolOutput | undefined
  private ran = false
  /** The definition last looked up for the call's name, and the registry's version then. */
  private lookedUp: ToolDefinition | undefined = undefined
  private lookedUpAt = -1
  /** The arguments as `parsedBy` parsed and validated them (`isConcurrencySafe` then `admit`: one parse). */
  private parsedBy: ToolDefinition | undefined = undefined
  private parsedArgs: unknown = undefined

  constructor(
    private readonly host: PipelineHost,
    private readonly call: ToolCall,
    private readonly agent: Agent,
    private readonly signal: AbortSignal,
  ) {
    this.callId = String(call?.id) as CallId
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

  admit(): Promise<void> | undefined {
    let admitted: ToolInvocation | Promise<ToolInvocation>
    try {
      admitted = admitCall(this.host, this.call, this.agent, this.signal, this)
    } catch (error) {
      this.failure = { error }
      return undefined
    }
    if (!(admitted instanceof Promise)) {
      this.invocation = admitted
      return undefined
    }
    return admitted.then(
      (value) => {
        this.invocation = value
      },
      (error: unknown) => {
        this.failure = { error }
      },
    )
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
    if (!(output instanceof Promise)) {
      this.accept(output)
      return undefined
    }
    return output.then(
      (value) => this.accept(value),
      (error: unknown) => {
        this.failure = { error }
      },
    )
  }

  finish(): ToolCallResult | Promise<ToolCallResult> {
    let result: ToolCallResult | Promise<ToolCallResult>
    try {
      if (this.failure) throw this.failure.error
      if (!this.ran || !this.invocation) throw abortedBeforeDispatch()
      result = settle(this.host, this.invocation, this.callRun, this.output!, this.signal)
    } catch (error) {
      result = failed(this.callId, error, this.callRun)
    }
    if (!(result instanceof Promise)) return this.done(result)
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
    const { host, agent } = this
    try {
      if (heard(host.events, 'tools/result')) {
        host.emitter.emit(host.filter(agent), 'tools/result', [agent, this.call, result], (error) => host.reportListenerError('tools/result', error))
      }
    } catch (error) {
      host.reportListenerError('tools/result', error)
    }
    return result
  }
}

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

/**
 * The policy stage: lookup, arguments, `tools/pre-execute` (and approval),
 * guards. Throws the refusal; synchronous unless a listener is heard or a
 * guard answers with a promise. The subject filter is looked up only when a
 * listener is heard.
 */
function admitCall(host: PipelineHost, call: ToolCall, agent: Agent, signal: AbortSignal, stage: StagedCall): ToolInvocation | Promise<ToolInvocation> {
  if (signal.aborted) throw abortedBeforeDispatch()
  const tool = stage.definition()
  if (!tool) throw new ToolError('UNKNOWN_TOOL', `unknown tool ${JSON.stringify(String(call.name))}`)
  const args = stage.argumentsFor(tool)
  const invocation: ToolInvocation = Object.freeze({
    call: Object.freeze({ id: call.id, name: call.name, arguments: call.arguments }),
    tool,
    args,
    agent,
    signal,
  })
  // With no tools/pre-execute listener the decision is `allow`: no async frame and no await for it.
  if (heard(host.events, 'tools/pre-execute')) return admitHeard(host, invocation)
  const guarded = runGuards(host.guards(agent), 0, invocation)
  return guarded ? guarded.then(() => invocation) : invocation
}

async function admitHeard(host: PipelineHost, invocation: ToolInvocation): Promise<ToolInvocation> {
  await admit(host, host.filter(invocation.agent), invocation)
  const guarded = runGuards(host.guards(invocation.agent), 0, invocation)
  if (guarded) await guarded
  return invocation
}

/**
 * The guards from `from` on, in order: synchronously while they answer
 * synchronously, then awaiting (each wait given up on when the call's signal
 * aborts). Throws `DENIED` (or `ABORTED_BEFORE_DISPATCH`).
 */
function runGuards(guards: readonly ToolGuard[], from: number, invocation: ToolInvocation): Promise<void> | undefined {
  for (let i = from; i < guards.length; i++) {
    let verdict: ToolGuardVerdict | PromiseLike<ToolGuardVerdict>
    try {
      verdict = guards[i]!(invocation)
    } catch (error) {
      throw policyFailure(error, 'a guard failed')
    }
    if (isThenable(verdict)) return awaitGuard(guards, i, verdict, invocation)
    if (invocation.signal.aborted) throw abortedBeforeDispatch()
    if (verdict && verdict.kind === 'deny') throw denied(verdict.reason)
  }
  return undefined
}

async function awaitGuard(guards: readonly ToolGuard[], index: number, pending: PromiseLike<ToolGuardVerdict>, invocation: ToolInvocation): Promise<void> {
  let verdict: ToolGuardVerdict
  try {
    verdict = await beforeDispatch(Promise.resolve(pending), invocation.signal)
  } catch (error) {
    throw policyFailure(error, 'a guard failed')
  }
  if (verdict && verdict.kind === 'deny') throw denied(verdict.reason)
  const rest = runGuards(guards, index + 1, invocation)
  if (rest) await rest
}

/** The result stage: `tools/post-execute`, then `finalizeContent`; synchronous when nobody listens to the first. */
function settle(host: PipelineHost, invocation: ToolInvocation, run: CallRun, body: ToolOutput, signal: AbortSignal): ToolCallResult | Promise<ToolCallResult> {
  // With no tools/post-execute listener the decision is `accept`: the body's output as is, without an await.
  if (heard(host.events, 'tools/post-execute')) {
    return review(host, host.filter(invocation.agent), invocation, body).then((output) => finalize(invocation, run, output, signal))
  }
  return finalize(invocation, run, body, signal)
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

/** `tools/pre-execute`, then the approval service for `ask`. Throws `DENIED` or `ABORTED_BEFORE_DISPATCH`. */
async function admit(host: PipelineHost, filter: SubjectFilter, invocation: ToolInvocation): Promise<void> {
  const { signal } = invocation
  let decision: PreExecuteDecision
  try {
    decision = heard(host.events, 'tools/pre-execute')
      ? await beforeDispatch(host.events.waterfall(filter, 'tools/pre-execute', invocation, async () => ALLOW), signal)
      : ALLOW
  } catch (error) {
    throw policyFailure(error, 'a policy check failed')
  }
  switch (decision?.kind) {
    case 'allow':
      return
    case 'deny':
      throw denied(decision.reason)
    case 'ask': {
      const approval = host.home.get('approval')
      if (!approval) throw denied('approval required but no approval service is available')
      const request: ApprovalRequest = Object.freeze({
        ...invocation,
        reason: decision.reason,
        ...(decision.scope !== undefined ? { scope: decision.scope } : {}),
      })
      let response: unknown
      try {
        response = await beforeDispatch(approval.request(request), signal)
      } catch (error) {
        throw policyFailure(error, 'the approval request failed')
      }
      const answer = approvalAnswer(response)
      try {
        if (heard(host.events, 'tools/approval')) host.emitter.emit(filter, 'tools/approval', [request, answer], (error) => host.reportListenerError('tools/approval', error))
      } catch (error) {
        host.reportListenerError('tools/approval', error)
      }
      if (answer.decision !== 'allow') throw denied(answer.feedback ? `not approved; the person said: ${answer.feedback}` : 'not approved')
      return
    }
    default:
      throw denied('a policy returned an unknown decision')
  }
}

/** `tools/post-execute`: the output to finalize, or a `BLOCKED` throw. */
async function review(host: PipelineHost, filter: SubjectFilter, invocation: ToolInvocation, output: ToolOutput): Promise<ToolOutput> {
  let decision: PostExecuteDecision
  try {
    decision = heard(host.events, 'tools/post-execute')
      ? await host.events.waterfall(filter, 'tools/post-execute', invocation, output, async () => ACCEPT)
      : ACCEPT
  } catch (error) {
    throw new ToolError('BLOCKED', `tool result withheld: a policy check failed (${messageOf(error, 'no detail')})`, { cause: error })
  }
  switch (decision?.kind) {
    case 'accept':
      return output
    case 'replace':
      return checkOutput(decision.output, 'the replacement output')
    case 'block':
      throw new ToolError('BLOCKED', decision.reason ? `tool result withheld: ${decision.reason}` : 'tool result withheld')
    default:
      throw new ToolError('BLOCKED', 'tool result withheld: a policy returned an unknown decision')
  }
}

function denied(reason: string | undefined): ToolError {
  return new ToolError('DENIED', reason ? `tool call denied: ${reason}` : 'tool call denied')
}

/**
 * A failing policy denies (fail closed). A `ToolError` is a deliberate choice
 * of code and passes through (so an abort while waiting stays an abort).
 */
function policyFailure(error: unknown, what: string): ToolError {
  if (isToolError(error)) return error
  return new ToolError('DENIED', `tool call denied: ${what} (${messageOf(error, 'no detail')})`, { cause: error })
}
