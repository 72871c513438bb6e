import type { Fiber } from './cordis'

// Cordis' `FiberState` is a `const enum` declared only in its typings (not importable at run
// time by an isolated-modules build): the two values read here, as `lib/fiber.d.ts` defines them.
const DISPOSED = 4
const UNLOADING = 5

/**
 * Whether `fiber` still owns what is registered on it: not disposed (`uid`
 * null, set synchronously by `dispose()`) and not unloading (a dependency
 * went away: its effects are being collected, and a new effect would outlive
 * them). Both states are set synchronously when the unload starts, before
 * the fiber's effects are disposed (at least a microtask later).
 */
export function fiberLive(fiber: Fiber): boolean {
  return fiber.uid !== null && fiber.state !== DISPOSED && fiber.state !== UNLOADING
}
