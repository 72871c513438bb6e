import { heard, type SubjectFilter } from '@deepseek-ai/dsh-scope'
import { approvalAnswer, type ApprovalRequest } from './approval'
import { abortedBeforeDispatch, beforeDispatch } from './cancellation'
import { isThenable } from './dispatch'
import { ToolError, isToolError } from './errors'
import type { PipelineHost } from './pipeline-host'
import { checkOutput, messageOf } from './results'
import type { PostExecuteDecision, PreExecuteDecision, ToolGuard, ToolGuardVerdict, ToolInvocation, ToolOutput } from './types'

// The policy stages of the pipeline (`pipeline.ts`): `tools/pre-execute` and approval, the guards, and
// `tools/post-execute`. Each refusal is a `ToolError` with its result code.

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' })
const ACCEPT: PostExecuteDecision = Object.freeze({ kind: 'accept' })

/**
 * The guards from `from` on, in order: synchronously while they answer
 * synchronously, then awaiting (each wait given up on when the call's signal
 * aborts). Throws `DENIED` (or `ABORTED_BEFORE_DISPATCH`).
 */
export function runGuards(guards: readonly ToolGuard[], from: number, invocation: ToolInvocation): Promise<void> | undefined {
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

/** `tools/pre-execute`, then the approval service for `ask`. Throws `DENIED` or `ABORTED_BEFORE_DISPATCH`. */
export async function admit(host: PipelineHost, filter: SubjectFilter, invocation: ToolInvocation): Promise<void> {
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
export async function review(host: PipelineHost, filter: SubjectFilter, invocation: ToolInvocation, output: ToolOutput): Promise<ToolOutput> {
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
