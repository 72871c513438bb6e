import type { ApprovalRequest, ApprovalResponse, ToolApproval } from '@deepseek-ai/dsh-tools'
import { Context, Service } from '../cordis'

/**
 * `ctx.approval` for the command line: it hands each request to `decide`
 * (a prompt to the person, or the one-shot policy). A decision that throws
 * is a denial; the tools pipeline reads the answer (an "always" carries the
 * request's scope to remember, a refusal may carry the person's words).
 */
export class ApprovalService extends Service implements ToolApproval {
  constructor(
    ctx: Context,
    private readonly decide: (request: ApprovalRequest) => Promise<ApprovalResponse>,
  ) {
    super(ctx, 'approval')
  }

  async request(request: ApprovalRequest): Promise<ApprovalResponse> {
    try {
      return await this.decide(request)
    } catch {
      return 'deny'
    }
  }
}

/**
 * The question the person is asked, e.g. `write_file: write 12 bytes to
 * notes.txt` (its first line, for a plan). A request without a question
 * shows the call's whole arguments: a cut would hide what the person
 * approves (`…; rm -rf ~` at the end of a long command).
 */
export function describeRequest(request: ApprovalRequest): string {
  return request.reason ? `${request.call.name}: ${request.reason.split('\n')[0]}` : `${request.call.name} ${request.call.arguments}`
}

/**
 * The approval prompt's question: `allow write_file: write 12 bytes to
 * notes.txt?`; a question with more lines (a plan to approve) keeps them,
 * indented, below its first line.
 */
export function approvalQuestion(request: ApprovalRequest): string {
  const head = describeRequest(request)
  const body = (request.reason ?? '')
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
  return `allow ${head}${head.endsWith('?') ? '' : '?'}${body.map((line) => `\n  ${line}`).join('')}`
}
