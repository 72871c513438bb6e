import type { Output } from './output'

/** How many lines of a resumed session's last answer the terminal shows. */
export const RESUME_ANSWER_LINES = 30

/**
 * Shows a resumed session's last answer under its transcript, rendered like
 * a live answer (markdown on a terminal), cut after `RESUME_ANSWER_LINES`
 * lines with a note saying how many more there were.
 */
export function showAnswer(output: Output, answer: string): void {
  const lines = answer.replace(/\n+$/, '').split('\n')
  const shown = lines.slice(0, RESUME_ANSWER_LINES)
  output.answer.write(`${shown.join('\n')}\n`)
  output.answer.newline()
  if (lines.length > shown.length) output.say('note', `  … ${lines.length - shown.length} more line(s) of the last answer`)
}
