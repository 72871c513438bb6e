import type { AnySessionEvent, SessionEventMap } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError } from './errors'
import { FORMAT_VERSION, serializeEvent } from './line-format'

type Meta = SessionEventMap['session/meta']

/**
 * Checks and serializes the events of a direct `append()` before anything is
 * queued, so a bad append queues nothing: they must continue the log from
 * `nextSeq` (the open writer's, or the first event's own seq for a new one)
 * without gaps, be well-formed envelopes, start a new log with its
 * `session/meta`, and be serializable. Throws `INVALID_APPEND` otherwise.
 */
export function serializeAppend(id: string, events: readonly AnySessionEvent[], nextSeq: number | undefined): string[] {
  const lines: string[] = []
  let expected = nextSeq ?? events[0]?.seq
  for (const event of events) {
    const problem = eventProblem(event, expected!)
    if (problem) {
      throw new JsonlPersistenceError('INVALID_APPEND', `Cannot append to session "${id}": ${problem}. Nothing was queued.`)
    }
    try {
      lines.push(serializeEvent(event))
    } catch (error) {
      throw new JsonlPersistenceError(
        'INVALID_APPEND',
        `Cannot append to session "${id}": event ${event.seq} (${event.type}) is not serializable JSON. Nothing was queued.`,
        { cause: error },
      )
    }
    expected!++
  }
  if (nextSeq === undefined && events[0]!.seq === 0 && events[0]!.type !== 'session/meta') {
    throw new JsonlPersistenceError('INVALID_APPEND', `Cannot append to session "${id}": seq 0 must be its session/meta. Nothing was queued.`)
  }
  return lines
}

function eventProblem(event: AnySessionEvent, seq: number): string | undefined {
  if (typeof event !== 'object' || event === null) return 'an event is not an object'
  if (event.seq !== seq) return `expected seq ${seq}, got ${String(event.seq)} (appends must continue the log without gaps)`
  if (typeof event.type !== 'string' || event.type.length === 0) return `event ${seq} has no type`
  if (typeof event.time !== 'number' || !Number.isFinite(event.time)) return `event ${seq} has no finite time`
  if (typeof event.data !== 'object' || event.data === null || Array.isArray(event.data)) return `event ${seq} has no object data`
  if (event.type === 'session/meta' && (event.data as Meta).version > FORMAT_VERSION) {
    return `event ${seq} is a session/meta of format version ${(event.data as Meta).version}, newer than ${FORMAT_VERSION}`
  }
  return undefined
}
