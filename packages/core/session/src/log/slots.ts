import type { AnySessionEvent } from '../types'
import type { ChunkPack } from './chunk-pack'
import type { SlotList } from './slot-list'

export type { Slot } from './slot-list'

/**
 * Where a view reads from: the first `length` entries of `slots` (the list
 * may hold more, e.g. while a session replays a log it adopted). Every field
 * is read on every access: `slots` only grows, `pack` may appear later.
 */
export interface PackedLog {
  readonly slots: SlotList
  readonly pack: ChunkPack | undefined
  readonly length: number
}

/** The event at `seq`, rebuilt when it is packed; `undefined` past the end. */
export function eventAt(log: PackedLog, seq: number): AnySessionEvent | undefined {
  if (seq >= log.length) return undefined
  const slot = log.slots.get(seq)
  return typeof slot === 'number' ? log.pack!.event(slot, seq) : slot
}
