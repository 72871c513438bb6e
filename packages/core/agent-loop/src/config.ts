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

export interface AgentLoopConfig {
  /** Size of each agent's rolling pool of concurrency-safe tool calls; 1 runs tools serially. */
  maxParallelToolCalls: number
  agents: ConfigAgent[]
}

export const AgentLoopConfig: Schema<Partial<AgentLoopConfig>, AgentLoopConfig> = Schema.object({
  maxParallelToolCalls: Schema.natural()
    .min(1)
    .default(10)
    .description('Concurrency-safe tool calls run in a rolling pool of this size per agent (1 = serial).'),
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
