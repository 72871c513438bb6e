import Schema from 'schemastery'
import type { AgentType } from './types'

/** An agent type as the config writes it (see `AgentType`). */
export type AgentTypeConfig = { -readonly [K in keyof AgentType]: K extends 'tools' ? string[] : AgentType[K] }

/** dsh-subagents' config (R-SUB-2). */
export interface SubagentsConfig {
  /** The agent types a parent may start. */
  types?: AgentTypeConfig[]
  /** The type a spawn without `agentType` uses; default: the first type. */
  defaultType?: string
  /** Children of one parent running at once; more wait in the order they were spawned (model order). Default 4. */
  maxConcurrent?: number
  /** How deep children may nest: 1 allows children of top-level agents only. Default 2. */
  maxDepth?: number
}

const AgentTypeSchema: Schema<AgentTypeConfig> = Schema.object({
  name: Schema.string().pattern(/^[a-zA-Z0-9_-]{1,64}$/).required().description('The type name the parent model passes as agentType.'),
  description: Schema.string().required().description('When to use it (shown to the parent model).'),
  systemPrompt: Schema.string().required().description("The child's persona (replaces the deployment persona)."),
  tools: Schema.array(String).description('Allowed tool names or globs (* matches anything); absent: every registered tool.'),
  model: Schema.string().description("The child's model; absent: the parent's."),
  provider: Schema.string().description("The child's provider; absent: the parent's."),
})

export const SubagentsConfig: Schema<SubagentsConfig> = Schema.object({
  types: Schema.array(AgentTypeSchema).default([]).description('The agent types a parent may start.'),
  defaultType: Schema.string().description('The type used when a spawn names none (default: the first).'),
  maxConcurrent: Schema.natural().min(1).default(4).description('Children of one parent running at once; more wait in model order.'),
  maxDepth: Schema.natural().min(1).default(2).description('How deep children may nest.'),
})
