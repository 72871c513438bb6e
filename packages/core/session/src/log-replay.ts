import { SessionError } from './errors'
import type { ChunkPack } from './log/chunk-pack'
import type { SlotList } from './log/slot-list'
import type { SessionLog } from './session-log'
import type { AnySessionEvent } from './types'

/** Replays `events` into `log` starting at `offset` (their seqs become `offset + index`). */
export function replay(log: SessionLog, events: readonly AnySessionEvent[], offset: number, context: string): void {
  if (!Array.isArray(events)) throw new SessionError('INVALID_ARGUMENT', `${context}: the events must be an array`)
  if (offset === 0 && events.length === 0) {
    throw new SessionError('INVALID_EVENT', `${context}: the log is empty (a session log starts with session/meta)`)
  }
  try {
    for (let i = 0; i < events.length; i++) {
      replayOne(log, events[i], i, offset)
      log.packChunks()
    }
  } catch (error) {
    throw inContext(error, context)
  }
}

/**
 * Replays the entries of a `LoadedLog` (what a backend parsed from JSON) on
 * the trusted path: objects go through `admit` without the lossless-JSON
 * walk, packed chunks only through the structure check. The session adopts
 * the entry list (see `loadedEntries`) and shares the packed chunks.
 */
export function replayLoaded(log: SessionLog, slots: SlotList, pack: ChunkPack, context: string): void {
  const count = slots.count
  if (count === 0) {
    throw new SessionError('INVALID_EVENT', `${context}: the log is empty (a session log starts with session/meta)`)
  }
  const runs = pack.runCursor()
  log.adopt(slots, pack)
  try {
    for (let i = 0; i < count; i++) {
      const slot = slots.get(i)!
      if (typeof slot === 'number') log.admitPacked(runs.turnOf(slot), runs.stepOf(slot), i)
      else replayOne(log, slot, i, 0, true)
      log.packChunks()
    }
  } catch (error) {
    throw inContext(error, context)
  }
}

/** Replays one event at `offset + i`: a loaded one (offset 0) is adopted as the log entry, a seeded one copied. */
function replayOne(log: SessionLog, value: unknown, i: number, offset: number, trusted = false): void {
  const event = value as Partial<AnySessionEvent> & { ignorable?: unknown }
  if (event === null || typeof event !== 'object') {
    throw new SessionError('INVALID_EVENT', `event ${i} is not an object`, { seq: offset + i })
  }
  if (offset === 0 && event.seq !== i) {
    throw new SessionError('INVARIANT', `seq must be dense from 0: event ${i} has seq ${event.seq}`, { seq: i })
  }
  if (typeof event.time !== 'number' || !Number.isFinite(event.time)) {
    throw new SessionError('INVALID_EVENT', `event ${i} (${event.type}) has no valid time`, { seq: offset + i })
  }
  if (offset === 0) {
    // A loaded envelope becomes the log entry itself (see `admit`).
    const unknown = unknownEnvelopeField(event)
    if (unknown !== undefined) {
      throw new SessionError('INVALID_EVENT', `event ${i} (${event.type}) has a field this version does not know: ${JSON.stringify(unknown)}`, { seq: i })
    }
    log.admit(event.type as string, event.data, i, event.time, event.ignorable === true, event as Record<string, unknown>, trusted)
  } else {
    log.admit(event.type as string, event.data, offset + i, event.time, event.ignorable === true)
  }
}

function inContext(error: unknown, context: string): unknown {
  if (!(error instanceof SessionError)) return error
  return new SessionError(error.code, `${context}: ${error.message}`, {
    seq: error.seq,
    type: error.type,
    path: error.path,
    cause: error,
  })
}

/** The first field of a loaded envelope outside `{ type, seq, time, data, ignorable }`, if any. */
function unknownEnvelopeField(event: object): string | undefined {
  for (const key in event) {
    if (key !== 'type' && key !== 'seq' && key !== 'time' && key !== 'data' && key !== 'ignorable') return key
  }
  return undefined
}
