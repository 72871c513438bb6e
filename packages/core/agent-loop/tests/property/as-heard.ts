import { LoadedLog, SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import type { World } from './world'

let reloads = 0

/**
 * What users see of the log, live and reloaded: every event reads back (by
 * JSON) as the object its `session/event` listeners received, frozen then
 * and when read back; and the log's JSON lines, loaded back the two ways a
 * backend loads them (each line parsed, or a chunk line packed from its
 * bytes), and a session resumed from them, give the same JSON, byte for byte.
 * Chunks are stored packed (a run of the log's entries, columns of the
 * pack) and rebuilt on every read, so this is where a storage change shows.
 * Checked on the live session after each program (`runProgram`), apart from
 * `checkWorld`, whose own tests hand it tampered copies of a log.
 */
export function asHeardProblems(world: World): string[] {
  const problems: string[] = []
  const events = world.session.events as readonly AnySessionEvent[]
  const lines = events.map((event) => JSON.stringify(event))
  for (const { seq, json, frozen } of world.heard) {
    if (lines[seq] !== json) problems.push(`#${seq} reads back as ${lines[seq]}, but its listeners received ${json}`)
    if (!frozen) problems.push(`#${seq} was not frozen when its listeners received it`)
  }
  events.forEach((event, seq) => {
    if (!Object.isFrozen(event) || !Object.isFrozen(event.data)) problems.push(`#${seq} (${event.type}) is not frozen when read back`)
  })
  const whole = `[${lines.join(',')}]`
  const parsed = new LoadedLog()
  const packed = new LoadedLog()
  for (const line of lines) {
    parsed.push(JSON.parse(line))
    const bytes = Buffer.from(line)
    if (!packed.pushChunkJson(bytes, 0, bytes.length)) packed.push(JSON.parse(line))
  }
  if (JSON.stringify(parsed.events) !== whole) problems.push('the log loaded back from its parsed JSON lines has other JSON')
  if (JSON.stringify(packed.events) !== whole) problems.push('the log loaded back with its chunk lines packed from their bytes has other JSON')
  try {
    const resumed = world.root.sessions.prepare(SessionId(`reloaded-${++reloads}`), { events: packed.events })
    if (JSON.stringify(resumed.events) !== whole) problems.push('a session resumed from the loaded log has other JSON')
  } catch (error) {
    problems.push(`the loaded log does not resume: ${(error as Error).message}`)
  }
  return problems
}
