/**
 * Reading `signal.aborted` before every chunk of a stream, cheaply (the
 * pump's per-chunk checks and the scripted model's pull use it; an adapter
 * with a per-chunk check may too). Why not `signal.aborted`: on Node 20 every
 * `AbortSignal` has a hidden class of its own, so a plain property read in a
 * function that checks every chunk meets a new class with each call's signal
 * and deoptimizes that function (and all it inlined) at the start of each of
 * the first streams, until the read turns megamorphic (then a lookup per
 * chunk, about as slow as `Reflect.get`: about 37 ns). A signal that
 * `readsAbortedNatively` has Node's getter called directly (a known function,
 * no lookup: about 12 ns), which is what the property read runs; any other
 * signal is read with `Reflect.get` (a generic lookup, no type feedback).
 */

import { types } from 'node:util'

/** Node's own `aborted` getter of `AbortSignal.prototype` (what `signal.aborted` runs on every Node signal). */
const nativeAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')?.get as ((this: AbortSignal) => boolean) | undefined

/*
 * The getter's own property read meets every Node 20 signal with a hidden
 * class of its own, so its type feedback turns megamorphic after a few
 * signals; until then, a function that inlined the getter (`isSignalAborted`)
 * is deoptimized by the first chunk of each new call's stream. Reading a few
 * fresh signals once, before the first stream's first check, makes that
 * feedback megamorphic from the start (what it ends up as anyway): no such
 * deoptimization in the first streams of a process. V8 keeps feedback for a
 * function only after a few calls, hence more reads than classes: on Node
 * 20.20, 16 reads left the feedback short of megamorphic (a check optimized
 * after them was still deoptimized by the next new signal; 20 reads or more,
 * none), so 32. Done at the first stream, not when the module loads: the
 * getter's feedback is the process's, and a host that only imports this
 * package keeps its own.
 */
let warmedUp = nativeAborted === undefined

function warmUp(): void {
  warmedUp = true
  for (let i = 0; i < 32; i++) nativeAborted!.call(new AbortController().signal)
}

/**
 * Whether `signal.aborted` is exactly Node's getter called on `signal`: a
 * signal of Node's own (`AbortController`, `AbortSignal.timeout`/`any`/`abort`:
 * their prototype is `AbortSignal.prototype`) with no own `aborted`, and not a
 * `Proxy` (whose `get` trap may answer `aborted` otherwise than the getter
 * would: such a signal is read through the trap). Decide it
 * once per stream, when the stream is made, and pass it to `isSignalAborted`
 * (the first `true` also warms the getter's feedback, above).
 */
export function readsAbortedNatively(signal: AbortSignal | undefined): boolean {
  if (signal === undefined || nativeAborted === undefined || Object.getPrototypeOf(signal) !== AbortSignal.prototype || Object.hasOwn(signal, 'aborted') || types.isProxy(signal)) return false
  if (!warmedUp) warmUp()
  return true
}

/** Whether `signal` aborted; `native`: what `readsAbortedNatively(signal)` said. */
export function isSignalAborted(signal: AbortSignal, native: boolean): boolean {
  return (native ? nativeAborted!.call(signal) : Reflect.get(signal, 'aborted')) === true
}

/**
 * `signal.aborted`, read through Node's getter itself for a signal of Node's
 * own (see above): every Node 20 signal has a hidden class of its own, so the
 * first property read of each step's signal misses the property caches (a
 * runtime lookup, about a microsecond while the code runs unoptimized); the
 * getter called directly needs no lookup. For the once-per-call checks
 * before a model call is prepared and opened.
 */
export function abortedNow(signal: AbortSignal): boolean {
  // Any other signal is read as `signal.aborted` always was (a truthy value counts).
  return readsAbortedNatively(signal) ? nativeAborted!.call(signal) : Boolean(signal.aborted)
}
