import type { TaskEnding, TaskStopCause } from './types'

/** What a notice says about one task. */
export interface NoticeFacts {
  readonly id: string
  readonly kind: string
  readonly title: string
  readonly ending: TaskEnding
  readonly output: string
  readonly error?: { readonly message: string }
  readonly stoppedBy?: TaskStopCause
}

const WHY_STOPPED: Record<TaskStopCause, string> = {
  person: 'was stopped by the person',
  model: 'was stopped by you',
  'owner-cancelled': 'was stopped (the agent that gave you your task cancelled it)',
  'owner-disposed': 'was stopped (its agent was closed)',
  unloaded: 'was stopped (the plugin that ran it was unloaded)',
}

/**
 * The text the owner's model reads when a task ends (R-TSK-2): one header
 * line in brackets, `[Background task task-3 completed] shell: npm test`,
 * then what the task produced. Deterministic (no clock, no counters), so a
 * resumed session rebuilds the same request.
 */
export function outcomeNotice(facts: NoticeFacts, maxChars: number): string {
  const what = `${facts.kind}: ${oneLine(facts.title)}`
  const output = bounded(facts.output.replace(/\n+$/, ''), maxChars)
  switch (facts.ending) {
    case 'completed':
      return `[Background task ${facts.id} completed] ${what}\n${output === '' ? '(no output)' : output}`
    case 'failed':
      return `[Background task ${facts.id} failed] ${what}\nError: ${facts.error?.message ?? 'unknown error'}${output ? `\nOutput so far:\n${output}` : ''}`
    case 'cancelled':
      return `[Background task ${facts.id} ${WHY_STOPPED[facts.stoppedBy ?? 'person']}] ${what}${output ? `\nOutput so far:\n${output}` : ''}`
    case 'interrupted':
      return (
        `[Background task ${facts.id} was interrupted] ${what}\n` +
        'The session stopped before the task finished (the process ended or the agent was closed); it is not running any more. Start it again if you still need it.'
      )
  }
}

/** `text` cut to `maxChars`, keeping its beginning and its end around a note. */
export function bounded(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text
  const note = (cut: number) => `\n[… ${cut} characters cut from the middle …]\n`
  const room = Math.max(0, maxChars - note(text.length).length)
  const head = Math.ceil(room / 2)
  const tail = room - head
  return `${text.slice(0, head)}${note(text.length - head - tail)}${tail ? text.slice(text.length - tail) : ''}`
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}
