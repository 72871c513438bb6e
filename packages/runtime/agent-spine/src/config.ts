import Schema from 'schemastery'
import AgentDefaultModel from '@deepseek-ai/dsh-agent-default-model'
import { AgentLoopConfig, type ConfigAgent, type Durability } from '@deepseek-ai/dsh-agent-loop'
import Invariants from '@deepseek-ai/dsh-invariants'
import LlmRetry from '@deepseek-ai/dsh-llm-retry'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'

/**
 * The spine's configuration. The loop's own fields sit at the top level; each
 * sub-object is handed, as it is, to the package that owns it and is
 * validated by that package's schema (so this bundle never drifts from its
 * parts).
 */
export interface SpineConfig {
  /** dsh-agent-loop: size of each agent's pool of concurrency-safe tool calls (1 = serial). Default 10. */
  maxParallelToolCalls: number
  /** dsh-agent-loop: when the session log is flushed, `'step'` (before every request, the default) or `'turn'`. */
  durability: Durability
  /** dsh-agent-loop: agents started when the spine starts. Default none. */
  agents: ConfigAgent[]
  /** dsh-system-prompt: `{ identity?, persona? }`. */
  systemPrompt: SystemPrompt.Config
  /** dsh-agent-default-model: `{ provider?, model? }`, the route of agents that name none. */
  defaultModel: AgentDefaultModel.Config
  /** dsh-llm-retry: `{ baseDelayMs = 500, maxDelayMs = 30000, budgets? }`. */
  retry: LlmRetry.Config
  /** dsh-invariants: `{ policy? }` (`throw` | `log` | `collect`, default `log`). */
  invariants: Invariants.Config
}

export namespace SpineConfig {
  /** What a caller may pass: every field optional. */
  export type Input = Partial<SpineConfig>
}

/** The whole configuration of the spine as one Schemastery schema, built from the owners' schemas. */
export const SpineConfig: Schema<SpineConfig.Input, SpineConfig> = Schema.intersect([
  AgentLoopConfig,
  Schema.object({
    systemPrompt: SystemPrompt.Config.description('dsh-system-prompt: harness identity and deployment persona.'),
    defaultModel: AgentDefaultModel.Config.description('dsh-agent-default-model: the provider/model of agents that name none.'),
    retry: LlmRetry.Config.description('dsh-llm-retry: backoff and per-code retry budgets for transient model failures.'),
    invariants: Invariants.Config.description('dsh-invariants: what a broken runtime invariant does.'),
  }),
]) as unknown as Schema<SpineConfig.Input, SpineConfig>
