import type { Durability } from './config'
import type { Context } from './cordis'

/**
 * What every agent of one loop shares: the loop's context and the services it
 * holds (untraced: the loop calls them several times per step), and its
 * settings. Built once by the service; agents and their turns only read it.
 */
export interface LoopEnvironment {
  /** The loop's own context: every `agent/*` checkpoint is dispatched from it, scope-filtered. */
  readonly home: Context
  readonly sessions: Context['sessions']
  readonly llm: Context['llm']
  readonly tools: Context['tools']
  readonly systemPrompt: Context['systemPrompt']
  readonly maxParallelToolCalls: number
  /** When the log is flushed (contracts §2): `'step'` before each request and after admissions, `'turn'` at turn ends only. */
  readonly durability: Durability
}
