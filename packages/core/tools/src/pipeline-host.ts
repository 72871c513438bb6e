import type { ContainedEmitter, RawEvents, SubjectFilter } from '@deepseek-ai/dsh-scope'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Context } from './cordis'
import type { ToolDefinition, ToolGuard } from './types'

/** What the pipeline needs from the registry that runs it. */
export interface PipelineHost {
  /** The registry's own context: `approval` is read through it. */
  readonly home: Context
  readonly events: RawEvents
  /** Emits `tools/result` with listener failures contained. */
  readonly emitter: ContainedEmitter
  filter(agent: Agent): SubjectFilter
  definition(name: string, agent: Agent): ToolDefinition | undefined
  guards(agent: Agent): readonly ToolGuard[]
  /** Changes whenever a registration changes: an unchanged version means `definition` would answer the same. */
  readonly version: number
  readonly defaultTimeoutMs: number
  reportListenerError(event: string, error: unknown): void
}
