/**
 * The log's envelope `{ type, seq, time, data }`, frozen, made by a
 * constructor instead of an object literal.
 *
 * Why: V8 tracks an object literal's allocations at its site and, once the
 * objects of a site keep surviving (the log keeps every envelope), decides
 * to allocate them in the old generation directly ("pretenuring"). That
 * decision deoptimizes every optimized function that inlined the literal,
 * which happens in a long session's first rounds (the cold round of
 * issue 18). An object made by `new` has no allocation site: the decision
 * never reaches the code that appends.
 *
 * Every envelope of a log is made here, a chunk's and a packed chunk's
 * rebuilt on read included: code that reads events (the dispatch, the
 * listeners) meets one hidden class, not a second one at an answer's first
 * or last chunk.
 *
 * The envelope is still a plain object: its prototype is `Object.prototype`
 * (so `constructor` is `Object`, and it compares, prints, clones and
 * serializes as the literal did), with the same four own keys in the same
 * order.
 */
import type { AnySessionEvent } from '../types'

interface EnvelopeFields {
  type: string
  seq: number
  time: number
  data: object
}

/** Makes an envelope (unfrozen): `Object.freeze(new Envelope(…))`, or `newEnvelope`. */
export const Envelope = function (this: EnvelopeFields, type: string, seq: number, time: number, data: object) {
  this.type = type
  this.seq = seq
  this.time = time
  this.data = data
} as unknown as new (type: string, seq: number, time: number, data: object) => EnvelopeFields
Envelope.prototype = Object.prototype

/**
 * An envelope whose `time` is not a number, kept for the process's life: it
 * gives the envelope's `time` field a tagged representation from the first
 * envelope on (see `now`). Exported, which keeps it alive for the module's
 * life, on purpose: once the only object of a map transition is collected, a
 * full GC may drop the transition, and the next envelope would get a field of
 * doubles again.
 */
export const TAGGED_TIME: object = Object.freeze(new Envelope('', 0, undefined as unknown as number, Object.freeze({})))

let sharedTime = Number.NaN

/**
 * `Date.now()`, as the same number object for every call in one millisecond.
 *
 * Why: `time` (about 1.8e12) does not fit in a small integer, so V8 keeps it
 * in a heap number of its own (16 bytes) per envelope when the field holds
 * doubles, and the log keeps every envelope. With the field tagged
 * (`TAGGED_TIME`), an envelope holds a reference to the number it was given,
 * and the envelopes of one millisecond (several turns' worth) share one: the
 * same values, 16 bytes less kept per event, and less for each scavenge to
 * copy while the session is young.
 */
export function now(): number {
  const time = Date.now()
  if (time !== sharedTime) sharedTime = time
  return sharedTime
}

/** A new frozen envelope (a plain object) for `data` at `seq`. */
export function newEnvelope(type: string, seq: number, time: number, data: object): AnySessionEvent {
  return Object.freeze(new Envelope(type, seq, time, data)) as unknown as AnySessionEvent
}
