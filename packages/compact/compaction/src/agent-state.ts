import type { Agent, AgentEventEmitter } from '@deepseek-ai/dsh-agent'
import type { TokenMeter } from './meter'
import type { CompactionReason, CompactionResult } from './types'

/** A compaction waiting for the agent's next step. */
export interface Pending {
  readonly reason: CompactionReason
  readonly why: string
  readonly instructions?: string
  /** Callers of `compact()` (from inside the agent's own turn) waiting for it. */
  readonly waiters?: Array<{ resolve(result: CompactionResult): void; reject(error: unknown): void }>
}

/** What dsh-compaction keeps per agent. */
export interface AgentState {
  readonly agent: Agent
  readonly meter: TokenMeter
  readonly events: AgentEventEmitter
  pending: Pending | undefined
  running: boolean
  /** No automatic compaction until a turn after this one (one failed, or could not get under the limit). */
  quietTurn: number
  /** The app's default route for an agent that names none (dsh-agent-default-model, when mounted). */
  readonly defaultRoute?: () => Route | undefined
}

/** How one compaction runs. */
export interface RunOptions {
  readonly signal: AbortSignal
  readonly why: string
  readonly instructions?: string
  readonly turn?: number
  readonly step?: number
}

/** A provider/model pair. */
export interface Route {
  readonly provider: string
  readonly model: string
}

/**
 * The route of the agent's requests: the last logged `request/header`, else
 * its options, else the app's default (so that the window is known before an
 * agent that names no model makes its first request).
 */
export function agentRoute(state: AgentState): Route | undefined {
  const route = state.meter.route
  if (route) return route
  const { provider, model } = state.agent.options
  if (provider && model) return { provider, model }
  return state.defaultRoute?.()
}

/** `provider/model`, for messages. */
export function routeName(route: Route | undefined): string {
  return route ? `${route.provider}/${route.model}` : 'the model'
}
