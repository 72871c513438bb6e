import type { Agent } from '@deepseek-ai/dsh-agent'

/**
 * On a parent's resume: every `subagent/started` of its log without a
 * `subagent/finished` (the process stopped while the child ran) gets one,
 * with status `interrupted`, so the tree a UI draws has no child that looks
 * alive. The child's own session stays as the crash left it (its loader
 * repairs it when someone resumes it); the parent's call of it was answered
 * by crash repair (`INTERRUPTED`), or, for a background child, its task is
 * reported interrupted by dsh-tasks.
 */
export function closeInterruptedRuns(parent: Agent, warn: (message: string) => void): void {
  const session = parent.session
  const open = new Set<string>()
  const events = session.events
  for (let i = 1 + (session.meta.seedLength ?? 0), length = events.length; i < length; i++) {
    const type = session.typeAt(i)
    if (type !== 'subagent/started' && type !== 'subagent/finished') continue
    const event = events[i]!
    if (event.type === 'subagent/started') open.add(event.data.runId)
    else if (event.type === 'subagent/finished') open.delete(event.data.runId)
  }
  for (const runId of open) {
    try {
      session.append('subagent/finished', { runId, status: 'interrupted' })
    } catch (error) {
      warn(`could not close subagent run ${runId} in the log of ${String(parent.id)}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
}
