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
