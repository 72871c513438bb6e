import Schema from 'schemastery'

/** One declaratively configured agent, started when the loop starts. */
export interface ConfigAgent {
  /** A stable label; without `sessionId`, each start creates `${id}-session-<uuid>`. */
  id: string
  provider?: string
  model?: string
  /** Create under this exact id, or resume it when persisted content exists. */
  sessionId?: string
  /** Load this persisted session (it must exist). Exclusive with `sessionId`. */
  resumeSessionId?: string
  /** Workspace directory of a fresh session. */
  cwd?: string
}

/**
 * When the loop makes the session log durable (`ctx.sessions.flush`).
 *
 * - `'step'` (the default): before each step's request leaves (after the
 *   entered batch and the `request/header`: one grouped fsync per step), after
 *   each burst of admissions that logged `inbox/enqueue`, and at each turn's
 *   end. The model never sees what a crash could then lose, and an admitted
 *   prompt is on disk soon after the admission call returns.
 * - `'turn'`: only at each turn's end (and after a one-shot injection turn),
 *   for throughput; a crash may lose the open turn, including a prompt the
 *   model already received.
 */
export type Durability = 'step' | 'turn'

export interface AgentLoopConfig {
  /** Size of each agent's rolling pool of concurrency-safe tool calls; 1 runs tools serially. */
  maxParallelToolCalls: number
  /** When the session log is made durable; see `Durability`. */
  durability: Durability
  agents: ConfigAgent[]
}

export const AgentLoopConfig: Schema<Partial<AgentLoopConfig>, AgentLoopConfig> = Schema.object({
  maxParallelToolCalls: Schema.natural()
    .min(1)
    .default(10)
    .description('Concurrency-safe tool calls run in a rolling pool of this size per agent (1 = serial).'),
  durability: Schema.union(['step', 'turn'] as const)
    .default('step')
    .description("When the session log is flushed: 'step' before every request and after admissions (default), 'turn' only at turn ends."),
  agents: Schema.array(
    Schema.object({
      id: Schema.string().required().description('Stable label of the agent.'),
      provider: Schema.string(),
      model: Schema.string(),
      sessionId: Schema.string().description('Exact session id: created on first use, resumed when persisted.'),
      resumeSessionId: Schema.string().description('Persisted session to load; must exist.'),
      cwd: Schema.string().description('Workspace directory for a fresh session.'),
    }),
  )
    .default([])
    .description('Agents started when the loop starts.'),
})
