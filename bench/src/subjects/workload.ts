/**
 * The workloads, defined once so that every subject streams the same deltas
 * and calls the same tools. Subjects translate them into their own model
 * protocol; nothing here depends on any agent library.
 */

/** The 20 text deltas of an ordinary answer (about 100 characters, like 20 real tokens). */
export const ANSWER_DELTAS: readonly string[] = Object.freeze(
  'The change is small: read the file, update the function, run the tests again, then report back to me here.'.split(
    /(?<= )/,
  ),
)

if (ANSWER_DELTAS.length !== 20) throw new Error(`the answer must have 20 deltas, has ${ANSWER_DELTAS.length}`)

/** `count` text deltas of about 5 characters each, for the streaming scenario. */
export function manyDeltas(count: number): string[] {
  const deltas = new Array<string>(count)
  for (let i = 0; i < count; i++) deltas[i] = `t${i % 1000} `
  return deltas
}

/** The name of the no-op tool every subject registers. */
export const NOOP_TOOL = 'noop'
export const NOOP_DESCRIPTION = 'Does nothing and answers "ok". Arguments: { n: number }.'

/** The name of the tool of the parallel scenario: it waits `SLOW_TOOL_MS` then answers. */
export const SLOW_TOOL = 'wait'
export const SLOW_TOOL_MS = 50
export const SLOW_DESCRIPTION = `Waits ${SLOW_TOOL_MS} ms and answers "ok". Arguments: { n: number }.`

/** The prompt of turn `i`. */
export function prompt(i: number): string {
  return `Please look at item ${i} and tell me what to change.`
}

/** A tool step: `count` calls of `tool`, arguments `{ n: 0 }`, `{ n: 1 }`… */
export function toolCalls(tool: string, count: number): Array<{ name: string; arguments: { n: number } }> {
  return Array.from({ length: count }, (_, n) => ({ name: tool, arguments: { n } }))
}
