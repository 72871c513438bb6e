import type { CallId } from '@deepseek-ai/dsh-llm'
import { heard, type ContainedEmitter, type RawEvents, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Context } from './cordis'
import { parseArguments } from './arguments'
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
 * One call through the pipeline (R-TOOL-1): lookup → arguments →
 * `tools/pre-execute` (→ approval) → guards → `tools/execute` around the body
 * → `tools/post-execute` → `finalizeContent` → `tools/result`. Every failure
 * becomes an error result with a code; this function never rejects (R-TOOL-2).
 */
export async function executeCall(
  host: PipelineHost,
  call: ToolCall,
  options: { agent: Agent; signal?: AbortSignal },
): Promise<ToolCallResult> {
  const callId = String(call?.id) as CallId
  const run = new CallRun()
  let result: ToolCallResult
  try {
    result = await runPipeline(host, call, options.agent, options.signal ?? neverAborted, run)
  } catch (error) {
    if (isToolError(error)) {
      // A blocked result withholds what the body deferred too: it may repeat the withheld output.
      result = errorResult(callId, error.code, error.message, error.code === 'BLOCKED' ? [] : run.contexts)
    } else {
      result = errorResult(callId, 'TOOL_ERROR', messageOf(error, 'tool failed'), run.contexts)
    }
  } finally {
    run.close()
  }
  try {
    if (heard(host.events, 'tools/result')) host.emitter.emit(host.filter(options.agent), 'tools/result', [options.agent, call, result], (error) =>
      host.reportListenerError('tools/result', error),
    )
  } catch (error) {
    host.reportListenerError('tools/result', error)
  }
  return result
}

async function runPipeline(host: PipelineHost, call: ToolCall, agent: Agent, signal: AbortSignal, run: CallRun): Promise<ToolCallResult> {
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

  await admit(host, filter, invocation)
  for (const guard of host.guards(agent)) {
    let verdict
    try {
      verdict = await beforeDispatch(guard(invocation), signal)
    } catch (error) {
      throw policyFailure(error, 'a guard failed')
    }
    if (verdict && verdict.kind === 'deny') throw denied(verdict.reason)
  }
  if (signal.aborted) throw abortedBeforeDispatch()

  let output = checkOutput(await dispatchCall(host.events, filter, invocation, run, tool.timeoutMs ?? (host.defaultTimeoutMs || undefined)), 'the tool output')
  output = await review(host, filter, invocation, output)

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
      let verdict: unknown
      try {
        verdict = await beforeDispatch(approval.request({ ...invocation, reason: decision.reason }), signal)
      } catch (error) {
        throw policyFailure(error, 'the approval request failed')
      }
      if (verdict !== 'allow') throw denied('not approved')
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
