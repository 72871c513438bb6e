import type { ApprovalRequest, ToolApproval } from '@deepseek-ai/dsh-tools'
import { Context, Service } from '../cordis'

/**
 * `ctx.approval` for the command line: it hands each request to `decide`
 * (a prompt to the person, or the one-shot policy). A decision that throws or
 * is not `'allow'` is a denial, as the tools pipeline requires.
 */
export class ApprovalService extends Service implements ToolApproval {
  constructor(
    ctx: Context,
    private readonly decide: (request: ApprovalRequest) => Promise<'allow' | 'deny'>,
  ) {
    super(ctx, 'approval')
  }

  async request(request: ApprovalRequest): Promise<'allow' | 'deny'> {
    try {
      return (await this.decide(request)) === 'allow' ? 'allow' : 'deny'
    } catch {
      return 'deny'
    }
  }
}

/** The question the person is asked, e.g. `write_file: write 12 bytes to notes.txt`. */
export function describeRequest(request: ApprovalRequest): string {
  return request.reason ? `${request.call.name}: ${request.reason}` : `${request.call.name} ${request.call.arguments.slice(0, 200)}`
}
