import type { ToolInvocation } from './types'

/** What the approval service is asked: the invocation, and why a policy wants a person to decide. */
export interface ApprovalRequest extends ToolInvocation {
  /** The `reason` of the `ask` decision, when the policy gave one. */
  readonly reason?: string
}

/**
 * The optional approval service behind `ask` decisions (a terminal prompt, a
 * UI dialog, a remote reviewer). dsh-tools reads it with `ctx.get('approval')`
 * at the moment a call asks; with none mounted, `ask` is a denial.
 *
 * Contract: `request` resolves `'allow'` or `'deny'`. Anything else, a
 * rejection, or a throw is a denial (fail closed). It should settle promptly
 * when `request.signal` aborts; the pipeline stops waiting for it then anyway
 * and returns `ABORTED_BEFORE_DISPATCH`.
 */
export interface ToolApproval {
  request(request: ApprovalRequest): Promise<'allow' | 'deny'>
}

declare module 'cordis' {
  interface Context {
    /** Optional: mounted by an approval plugin. Read it with `ctx.get('approval')`. */
    approval: ToolApproval
  }
}
