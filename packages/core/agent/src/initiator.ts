import { AsyncLocalStorage } from 'node:async_hooks'
import type { Agent } from './types'

const storage = new AsyncLocalStorage<Agent>()

/** Runs `fn` with `agent` as the initiator of everything it starts, synchronously or asynchronously. */
export function withInitiator<T>(agent: Agent, fn: () => T): T {
  return storage.run(agent, fn)
}

/** The agent whose loop is running the calling code, if any. */
export function initiator(): Agent | undefined {
  return storage.getStore()
}

/**
 * Entered once when the module loads, with no code inside: directly, which
 * turns on Node's promise hooks as the first agent's scope would, and from a
 * promise job, which writes and restores the storage's field on a promise the
 * hooks have seen. Entered first from inside a running process instead (the
 * first drain, itself in a job of promises made before the hooks were on),
 * that write makes V8 drop the optimized code of Node's hooks, which run for
 * every promise, at the start of a process's second stream (issue 18: cold
 * streaming CPU ×1.15–1.19 on Node 20). On Node 24 the storage needs no
 * hooks and this costs two empty calls. Nothing is observable: no code runs
 * inside either scope, and neither outlives its call.
 */
const placeholder = Object.freeze({}) as Agent
const nothing = (): void => {}
storage.run(placeholder, nothing)
void Promise.resolve().then(() => storage.run(placeholder, nothing))
