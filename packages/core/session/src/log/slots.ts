import type { AnySessionEvent } from '../types'
import type { ChunkPack } from './chunk-pack'

/** One log entry as stored: the event object, or the index of a packed `assistant/chunk` in the log's `ChunkPack`. */
export type Slot = AnySessionEvent | number

/**
 * Where a view reads from: the first `length` entries of `slots` (the array
 * may hold more, e.g. while a session replays a log it adopted). Every field
 * is read on every access: `slots` only grows, `pack` may appear later.
 */
export interface PackedLog {
  readonly slots: readonly Slot[]
  readonly pack: ChunkPack | undefined
  readonly length: number
}

/** The event at `seq`, rebuilt when it is packed; `undefined` past the end. */
export function eventAt(log: PackedLog, seq: number): AnySessionEvent | undefined {
  if (seq >= log.length) return undefined
  const slot = log.slots[seq]
  return typeof slot === 'number' ? log.pack!.event(slot, seq) : slot
}

/** Whether the entry at `seq` is an `assistant/chunk` (without rebuilding a packed one). */
export function isChunkAt(slots: readonly Slot[], seq: number): boolean {
  const slot = slots[seq]
  return typeof slot === 'number' || slot?.type === 'assistant/chunk'
}
