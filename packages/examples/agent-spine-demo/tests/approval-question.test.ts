import type { ApprovalRequest } from '@deepseek-ai/dsh-tools'
import { describe, expect, it } from 'vitest'
import { approvalQuestion, describeRequest } from '../src/cli/approval'

/** A request as the tools pipeline hands it over; only the fields the question reads are real. */
const request = (name: string, args: string, reason?: string) => ({ call: { id: 'c1', name, arguments: args }, ...(reason !== undefined ? { reason } : {}) }) as unknown as ApprovalRequest

describe('the approval question', () => {
  it('shows the whole arguments of a request without a question: the tail of a long command is what the person approves', () => {
    const command = `echo ${'a'.repeat(400)}; rm -rf ~/important`
    const args = JSON.stringify({ command })
    expect(describeRequest(request('run_thing', args))).toBe(`run_thing ${args}`)
    expect(approvalQuestion(request('run_thing', args))).toBe(`allow run_thing ${args}?`)
  })

  it("a policy's question: its first line in the head, the other lines below", () => {
    expect(approvalQuestion(request('exit_plan_mode', '{}', 'approve this plan?\n1. read\n\n2. write'))).toBe('allow exit_plan_mode: approve this plan?\n  1. read\n  2. write')
  })
})
