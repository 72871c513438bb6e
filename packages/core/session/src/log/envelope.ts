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

/** A new frozen envelope (a plain object) for `data` at `seq`. */
export function newEnvelope(type: string, seq: number, time: number, data: object): AnySessionEvent {
  return Object.freeze(new Envelope(type, seq, time, data)) as unknown as AnySessionEvent
}
