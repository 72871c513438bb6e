import type { ApprovalScope } from './approval-scope'
import type { ToolInvocation } from './types'

export type { ApprovalScope } from './approval-scope'

/** What the approval service is asked: the invocation, and why a policy wants a person to decide. */
export interface ApprovalRequest extends ToolInvocation {
  /** The `reason` of the `ask` decision, when the policy gave one. */
  readonly reason?: string
  /**
   * What an "always" answer would cover, when the policy that asked can
   * remember an answer for the session (from the `ask` decision's `scope`).
   * A UI offers "always" only when this is present, and shows it.
   */
  readonly scope?: ApprovalScope
}

/**
 * An answer in full. `remember` asks the policy that asked to apply the same
 * decision, without asking, to later calls in that scope for the rest of the
 * session (the policy keeps it; dsh-tools writes nothing anywhere). `feedback`
 * (with `deny`) is text for the model: it is appended to the denial the model
 * reads, so it can do what the person wants instead. With `allow`, feedback is
 * ignored.
 */
export interface ApprovalAnswer {
  readonly decision: 'allow' | 'deny'
  readonly remember?: ApprovalScope
  readonly feedback?: string
}

/** What `ToolApproval.request` may resolve: the plain words, or an answer in full. */
export type ApprovalResponse = 'allow' | 'deny' | ApprovalAnswer

/**
 * The optional approval service behind `ask` decisions (a terminal prompt, a
 * UI dialog, a remote reviewer). dsh-tools reads it with `ctx.get('approval')`
 * at the moment a call asks; with none mounted, `ask` is a denial.
 *
 * Contract: `request` resolves `'allow'`, `'deny'` or an `ApprovalAnswer`.
 * Anything else (an unknown decision, a `remember` that is not an object of
 * strings, a `feedback` that is not a string), a rejection, or a throw is a
 * denial (fail closed). It should settle promptly when `request.signal`
 * aborts; the pipeline stops waiting for it then anyway and returns
 * `ABORTED_BEFORE_DISPATCH`. Every answer it gives is announced as
 * `tools/approval` in its full form.
 */
export interface ToolApproval {
  request(request: ApprovalRequest): Promise<ApprovalResponse>
}

/** The most characters of feedback the model reads (the rest is cut, with an ellipsis). */
export const MAX_FEEDBACK_CHARS = 2000

const DENY: ApprovalAnswer = Object.freeze({ decision: 'deny' })
const ALLOW: ApprovalAnswer = Object.freeze({ decision: 'allow' })

/**
 * The full, frozen form of what an approval service resolved: `'allow'` and
 * `'deny'` become `{ decision }`; a well-formed answer is copied (feedback
 * trimmed, empty feedback dropped); anything malformed is a plain denial.
 */
export function approvalAnswer(response: unknown): ApprovalAnswer {
  if (response === 'allow') return ALLOW
  if (response === 'deny') return DENY
  if (response === null || typeof response !== 'object') return DENY
  const { decision, remember, feedback } = response as Record<string, unknown>
  if (decision !== 'allow' && decision !== 'deny') return DENY
  if (feedback !== undefined && typeof feedback !== 'string') return DENY
  let scope: ApprovalScope | undefined
  if (remember !== undefined) {
    if (remember === null || typeof remember !== 'object') return DENY
    const fields: Record<string, string> = {}
    for (const key of ['tool', 'path', 'command'] as const) {
      const value = (remember as Record<string, unknown>)[key]
      if (value === undefined) continue
      if (typeof value !== 'string') return DENY
      fields[key] = value
    }
    scope = Object.freeze(fields)
  }
  const text = decision === 'deny' && typeof feedback === 'string' ? feedback.trim() : ''
  return Object.freeze({
    decision,
    ...(scope ? { remember: scope } : {}),
    ...(text ? { feedback: text.length > MAX_FEEDBACK_CHARS ? `${text.slice(0, MAX_FEEDBACK_CHARS - 1)}…` : text } : {}),
  })
}

declare module 'cordis' {
  interface Context {
    /** Optional: mounted by an approval plugin. Read it with `ctx.get('approval')`. */
    approval: ToolApproval
  }
}
