import type { CallId } from '@deepseek-ai/dsh-llm'
import { heard, type ContainedEmitter, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Context } from './cordis'
import { parseArguments } from './arguments'
import { approvalAnswer, type ApprovalRequest } from './approval'
import { abortedBeforeDispatch, beforeDispatch } from './cancellation'
import { CallRun, dispatchCall } from './dispatch'
import { ToolError, isToolError } from './errors'
import { checkOutput, contentOf, errorResult, messageOf, successResult } from './results'
import type {
  PostExecuteDecision,
  PreExecuteDecision,
  ToolCall,
  ToolCallResult,
  ToolDefinition,
  ToolGuard,
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
 * Stages one call (R-TOOL-1): lookup → arguments → `tools/pre-execute` (→
 * approval) → guards, resolved as a plan whose `run()` is the body (inside
 * `tools/execute`) and whose `finish()` is `tools/post-execute` →
 * `finalizeContent` → `tools/result`. Every failure becomes an error result
 * with a code; nothing here rejects (R-TOOL-2).
 */
export async function planCall(host: PipelineHost, call: ToolCall, options: { agent: Agent; signal?: AbortSignal }): Promise<ToolCallPlan> {
  const { agent } = options
  const signal = options.signal ?? neverAborted
  const callId = String(call?.id) as CallId
  const run = new CallRun()
  let staged: { tool: ToolDefinition; invocation: ToolInvocation; filter: SubjectFilter } | undefined
  let failure: { error: unknown } | undefined
  let output: ToolOutput | undefined
  let ran = false
  try {
    staged = await admitCall(host, call, agent, signal)
  } catch (error) {
    failure = { error }
  }
  return {
    async run() {
      if (ran || failure || !staged) return
      ran = true
      try {
        if (signal.aborted) throw abortedBeforeDispatch()
        const { tool, invocation, filter } = staged
        output = checkOutput(await dispatchCall(host.events, filter, invocation, run, tool.timeoutMs ?? (host.defaultTimeoutMs || undefined)), 'the tool output')
      } catch (error) {
        failure = { error }
      }
    },
    async finish() {
      let result: ToolCallResult
      try {
        if (failure) throw failure.error
        if (!ran || !staged) throw abortedBeforeDispatch()
        result = await settle(host, staged.tool, staged.invocation, staged.filter, run, output!, signal)
      } catch (error) {
        result = failed(callId, error, run)
      } finally {
        run.close()
      }
      try {
        if (heard(host.events, 'tools/result')) host.emitter.emit(host.filter(agent), 'tools/result', [agent, call, result], (error) =>
          host.reportListenerError('tools/result', error),
        )
      } catch (error) {
        host.reportListenerError('tools/result', error)
      }
      return result
    },
  }
}

/** One call through the whole pipeline: `planCall`, then its body, then its result. Never rejects. */
export async function executeCall(host: PipelineHost, call: ToolCall, options: { agent: Agent; signal?: AbortSignal }): Promise<ToolCallResult> {
  const plan = await planCall(host, call, options)
  await plan.run()
  return plan.finish()
}

/** The error result of a failed stage. */
function failed(callId: CallId, error: unknown, run: CallRun): ToolCallResult {
  if (isToolError(error)) {
    // A blocked result withholds what the body deferred too: it may repeat the withheld output.
    return errorResult(callId, error.code, error.message, error.code === 'BLOCKED' ? [] : run.contexts)
  }
  return errorResult(callId, 'TOOL_ERROR', messageOf(error, 'tool failed'), run.contexts)
}

/** The policy stage: lookup, arguments, `tools/pre-execute` (and approval), guards. Throws the refusal. */
async function admitCall(
  host: PipelineHost,
  call: ToolCall,
  agent: Agent,
  signal: AbortSignal,
): Promise<{ tool: ToolDefinition; invocation: ToolInvocation; filter: SubjectFilter }> {
  if (signal.aborted) throw abortedBeforeDispatch()
  const tool = typeof call.name === 'string' ? host.definition(call.name, agent) : undefined
  if (!tool) throw new ToolError('UNKNOWN_TOOL', `unknown tool ${JSON.stringify(String(call.name))}`)
  const args = parseArguments(tool, call.arguments)
  const invocation: ToolInvocation = Object.freeze({
    call: Object.freeze({ id: call.id, name: call.name, arguments: call.arguments }),
    tool,
    args,
    agent,
    signal,
  })
  const filter = host.filter(agent)

  // With no tools/pre-execute listener the decision is `allow`: no async frame and no await for it.
  if (heard(host.events, 'tools/pre-execute')) await admit(host, filter, invocation)
  for (const guard of host.guards(agent)) {
    let verdict
    try {
      verdict = await beforeDispatch(guard(invocation), signal)
    } catch (error) {
      throw policyFailure(error, 'a guard failed')
    }
    if (verdict && verdict.kind === 'deny') throw denied(verdict.reason)
  }
  return { tool, invocation, filter }
}

/** The result stage: `tools/post-execute`, then `finalizeContent`. */
async function settle(
  host: PipelineHost,
  tool: ToolDefinition,
  invocation: ToolInvocation,
  filter: SubjectFilter,
  run: CallRun,
  body: ToolOutput,
  signal: AbortSignal,
): Promise<ToolCallResult> {
  // With no tools/post-execute listener the decision is `accept`: the body's output as is, without an await.
  const output = heard(host.events, 'tools/post-execute') ? await review(host, filter, invocation, body) : body
  const runContext = run.context(invocation, signal)
  let content
  try {
    content = tool.finalizeContent ? contentOf(tool.finalizeContent(output, runContext), 'finalizeContent()') : contentOf(output, 'the tool output')
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
