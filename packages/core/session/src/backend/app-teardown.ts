import { symbols, type Context, type Fiber } from '../cordis'

/** `FiberState.UNLOADING` of Cordis 4.0.0-rc.10 (a `const enum`, so not importable as a value). */
const UNLOADING = 5

/**
 * Whether the disposal of the plugin at `ctx` is part of a teardown that also
 * takes the sessions it writes: an ancestor of its fiber (the app's root, or
 * a bundle that holds it) is being unloaded, and the session store is inside
 * that teardown too (it is under an unloading fiber, or already gone).
 *
 * Why it matters: Cordis unloads the children of a fiber concurrently (every
 * effect disposer runs after one microtask, all awaited together), so when the
 * whole app is disposed the agent loop is still settling its turns (aborted
 * tool calls get their results, turns their `turn/end`) while this plugin is
 * being disposed. Then the plugin must keep writing until each of its live
 * sessions has been disposed by its owner. When only the plugin is unplugged
 * (or a subtree that does not hold the store), the sessions live on without
 * it, and waiting for them would never end: it closes at once.
 *
 * Reads Cordis internals that its typings expose (`fiber.uid`, `fiber.state`,
 * `fiber.parent`) and the store's own context behind its tracing proxy.
 */
export function teardownTakesTheSessions(ctx: Context): boolean {
  const unloading = ancestors(ctx.fiber).filter(leaving)
  if (unloading.length === 0) return false
  const store = storeFiber(ctx)
  if (store === undefined) return true
  return [store, ...ancestors(store)].some(leaving)
}

function leaving(fiber: Fiber): boolean {
  return fiber.uid === null || (fiber.state as number) === UNLOADING
}

/** The fibers above `fiber`, nearest first, up to the root. */
function ancestors(fiber: Fiber): Fiber[] {
  const out: Fiber[] = []
  let current = fiber
  while (current.parent.fiber !== current) {
    current = current.parent.fiber
    out.push(current)
  }
  return out
}

/** The fiber that provides `ctx.sessions`, if it is still provided. */
function storeFiber(ctx: Context): Fiber | undefined {
  const traced = ctx.get('sessions') as (object & { readonly [key: symbol]: unknown }) | undefined
  if (traced === undefined) return undefined
  const store = (traced[symbols.original] ?? traced) as { ctx?: Context }
  return store.ctx?.fiber
}
